"""The ``%claude`` line magic: its subcommands, parsed by argparse into a table of handlers.

Each command is one entry of :data:`COMMANDS`: its handler, its arguments, the usage line
shown when they are wrong, and whether it needs a session of this kernel or reads the event
logs. ``--session NAME`` may stand anywhere in the line. Mistakes are one line, never a
traceback, and fail the cell (the magic raises them as ``UsageError``):
:class:`~plan_widgets.ipython.usage.Usage` for the line's form,
:class:`~plan_widgets.model.errors.OptionError` for what it names. ``%claude`` alone or
``--help`` prints the usage text (:class:`~plan_widgets.ipython.usage.Help`).
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from ..model.errors import OptionError
from ..store import LogError
from . import agents, badday, command_help, history, listing, live, plans, policy, registry
from .resume import resume_command
from .usage import Help, Usage, one_line, raising, split, take

USAGE = command_help.usage()  # every command of COMMANDS (checked below)

HELP = ("-h", "--help", "help")
_NEEDS_VALUE = object()  # an option given last, without its value


def _no_arguments(p: argparse.ArgumentParser) -> None:
    pass


def _session_id(p: argparse.ArgumentParser) -> None:
    p.prefix_chars = ""  # any word is an ID (``-x`` too: "no session '-x'"), never an option
    p.add_argument("id", nargs="?")


def _switch(p: argparse.ArgumentParser) -> None:
    p.add_argument("switch", choices=("on", "off"))


def _rewind_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("turn", nargs="?")
    p.add_argument("--yes", action="store_true")


def _resume_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?")
    p.add_argument("--scripted", nargs="?", const=_NEEDS_VALUE)


@dataclass(frozen=True)
class Command:
    """One ``%claude`` subcommand."""

    name: str
    run: Callable[[argparse.Namespace], None]
    """The handler. Its namespace holds the arguments, ``config`` (the ``ClaudeMagics``),
    ``name`` (``--session``, or None) and ``live`` (the session, for ``live`` commands)."""
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    usage: str | None = None
    """The usage line when the arguments are wrong (None: "unexpected ARG")."""
    live: bool = False
    """Needs a session of this kernel (checked before the arguments)."""
    reads_logs: bool = False
    """An unreadable log is the command's one-line error."""


_ID = "[ID] [--session NAME]"
COMMANDS: dict[str, Command] = {c.name: c for c in [
    Command("status", live.status, live=True),
    Command("interrupt", live.interrupt, live=True),
    Command("stop", live.stop, live=True),
    Command("plan", live.plan, _switch, "%claude plan on|off", live=True),
    Command("sessions", history.sessions, reads_logs=True),
    Command("history", history.sessions, reads_logs=True),
    Command("resume", resume_command, _resume_arguments,
            "%claude resume [ID] [--scripted FILE] [--session NAME]", reads_logs=True),
    Command("log", history.log, _session_id, f"%claude log {_ID}", reads_logs=True),
    Command("cost", history.cost, _session_id, f"%claude cost {_ID}", reads_logs=True),
    Command("plans", plans.plans, plans.arguments, plans.USAGE, reads_logs=True),
    Command("context", live.context, live=True),
    Command("compact", badday.compact, badday.compact_arguments, live=True),
    Command("mcp", badday.mcp, live=True),
    Command("agents", agents.agents, live=True),
    Command("commands", listing.commands, live=True),
    Command("tools", listing.tools),
    Command("policy", policy.show),
    Command("rewind", live.rewind, _rewind_arguments,
            "%claude rewind [TURN] [--yes] [--session NAME]", live=True),
]}
command_help.check(list(COMMANDS))  # a command without help (or help without a command) fails


def _parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="%claude", add_help=False, allow_abbrev=False)
    raising(top, lambda message: f"%claude: {message}")
    sub = top.add_subparsers(dest="command")
    for command in COMMANDS.values():
        p = sub.add_parser(command.name, add_help=False, allow_abbrev=False)
        command.arguments(p)
        raising(p, lambda message, c=command: _wrong(c, message))
    return top


PARSER = _parser()


def run(config: Any, line: str) -> None:
    """Run one ``%claude`` line (``config``: the ``ClaudeMagics``, for its log_dir,
    scripted and approval_timeout)."""
    argv = split(line, "%claude")
    name = take(argv, "--session")
    if not argv or argv[0] in HELP:
        raise Help(USAGE)
    cmd = argv[0]
    command = COMMANDS.get(cmd)
    if command is None:
        near = difflib.get_close_matches(cmd, COMMANDS, n=1, cutoff=0.8)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise Usage(f"%claude: unknown command {cmd!r} ({hint}see %claude --help)")
    session = _live(name or "default") if command.live else None
    args = _parse(command, argv)
    args.config, args.name, args.live = config, name, session
    with _reading_logs(cmd) if command.reads_logs else nullcontext():
        command.run(args)


def _live(name: str) -> Any:
    s = registry.get(name)
    if s is None:
        raise OptionError(f"no session {name!r} yet: run a %%claude cell first")
    return s


def _parse(command: Command, argv: list[str]) -> argparse.Namespace:
    args, extra = PARSER.parse_known_args(argv)
    for dest, value in vars(args).items():
        if value is _NEEDS_VALUE:
            raise Usage(f"%claude: --{dest} needs a value")
    if extra:
        raise Usage(_wrong(command, f"unexpected {extra[0]!r}"))
    return args


def _wrong(command: Command, message: str) -> str:
    """The one line for wrong arguments: the command's usage, else what was wrong."""
    if command.usage:
        return f"usage: {command.usage}"
    return f"%claude {command.name}: {message} (see %claude --help)"


@contextmanager
def _reading_logs(cmd: str) -> Iterator[None]:
    """An event log that cannot be read (a corrupt line, no permission) is a one-line error
    of the command, not a traceback."""
    try:
        yield
    except (LogError, OSError) as e:
        raise OptionError(f"%claude {cmd}: cannot read the event log: {one_line(str(e))}"
                          ) from None
