"""``%%claude`` and ``%claude``: the magics, their configuration, and the input transformer.

IPython does not await an ``async def`` magic, so ``%%claude`` cells are rewritten by an input
transformer into ``await run_cell(line, body)``: the cell then waits without blocking the
event loop, and widget clicks stay live while it waits (ipykernel 7). What the cell does is
:mod:`plan_widgets.ipython.cell`; the ``%claude`` commands are
:mod:`plan_widgets.ipython.commands`.
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

from IPython.core import magic_arguments
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from traitlets import (
    Bool,
    CFloat,
    CInt,
    Dict,
    Enum,
    List,
    TraitError,
    Unicode,
    Union,
    observe,
    validate,
)

from ..agent.mode_names import mode_title
from ..model.agent_options import EFFORTS
from ..model.errors import OptionError
from ..model.options import DEFAULT_APPROVAL_TIMEOUT, RESTING_MODES, check_timeout
from . import command_help
from .usage import Help, Usage, UsageError, one_line, parse_cell_line

_TRANSFORM_PREFIX = "%%claude"
MODE_HELP = ", ".join(f"{m} ({mode_title(m)})" for m in RESTING_MODES) + "; when not given: " \
    f"default ({mode_title('default')})"
"""The modes by the SDK's names, which the flag takes, with the names the product shows
(one word per idea: "default" is also the session's name; issue 42, point 7)."""


@magics_class
class ClaudeMagics(Magics):
    """Run Claude Code turns from notebook cells. Defaults are configurable with ``%config``."""

    model = Unicode(None, allow_none=True, help="Model for new sessions.").tag(config=True)
    plan_model = Unicode(None, allow_none=True, help="Model used while planning.").tag(
        config=True
    )
    mode = Enum(RESTING_MODES, default_value="default", help="Resting permission mode.").tag(
        config=True
    )
    approval_timeout = CFloat(
        DEFAULT_APPROVAL_TIMEOUT, help="Seconds a decision waits before it expires (denied)."
    ).tag(config=True)
    log_dir = Unicode(
        None, allow_none=True,
        help="Where session event logs go (<log_dir>/<session id>.jsonl). Unset: the "
        "PLAN_WIDGETS_LOG_DIR environment variable, else <cwd>/.plan_widgets/sessions.",
    ).tag(config=True)
    scripted = Unicode(None, allow_none=True, help="Scripted model file (offline).").tag(
        config=True
    )
    wait = Bool(True, help="Cells wait for the turn (False: like --background).").tag(
        config=True
    )
    cli_path = Unicode(None, allow_none=True, help="The Claude Code CLI to run (unset: the one "
                       "bundled with claude-agent-sdk).").tag(config=True)
    kernel_tools = Bool(
        True, help="Give new sessions the kernel tools (variables, history, run code, propose "
        "a cell); False: like --no-kernel-tools.",
    ).tag(config=True)
    show_thinking = Bool(
        True, help="Show the model's thinking as a folded line in each turn (False: hidden; "
        "it is kept in the session's log either way).",
    ).tag(config=True)

    remote_images = Union(
        [Bool(), List(Unicode())], default_value=False,
        help="Load images from other servers in the agent's text: False (the default: such an "
        "image shows as a link naming its host), True, or a list of hosts "
        "(['example.com']). An image's URL can carry data out of the notebook as it loads.",
    ).tag(config=True)

    @observe("remote_images")
    def _remote_images_changed(self, change: Any) -> None:
        from ..render.engine import allow_remote_images

        allow_remote_images(change["new"])

    idle_timeout = CFloat(
        3600.0, help="Seconds a session may stay idle before its CLI exits to free its memory "
        "(200-400 MB); the next cell resumes it with its mode, model and context. 0: never.",
    ).tag(config=True)
    max_live_sessions = CInt(
        0, help="Most CLIs live at once in this kernel: past it the longest-idle session's "
        "CLI closes (resumed by its next cell), or, none idle, a new session is refused. "
        "0: no cap.",
    ).tag(config=True)

    unattended = Unicode(
        "", help="auto (detect), yes (no one can click: cells wait for the whole turn and rules "
        "decide) or no (someone clicks); unset: PLAN_WIDGETS_UNATTENDED (docs/unattended.md)."
    ).tag(config=True)
    rules = Unicode(
        "", help="Rules that decide what no one can click, e.g. 'plans=approve:acceptEdits; "
        "tools=allow:Read'; unset: PLAN_WIDGETS_RULES (docs/unattended.md)."
    ).tag(config=True)

    agent_options = Dict(
        help="The SDK's agent options for new sessions, by its names, e.g. {'effort': 'high', "
        "'add_dirs': ['../data'], 'allowed_tools': ['Read']} (docs/options.md; a cell's "
        "flags win over them, the administrator's policy over both).",
    ).tag(config=True)

    prestart = Bool(
        True, help="Start the default session's CLI in the background when the extension "
        "loads (with credentials or a scripted model), so the first prompt waits less.",
    ).tag(config=True)

    @validate("idle_timeout", "max_live_sessions")
    def _not_negative(self, proposal: Any) -> Any:
        if proposal["value"] < 0:
            raise TraitError(f"{proposal['trait'].name} must be 0 (off) or more")
        return proposal["value"]

    @validate("approval_timeout")
    def _check_timeout(self, proposal: Any) -> float:
        try:
            return check_timeout(proposal["value"])
        except OptionError as e:
            raise TraitError(str(e).replace("--approval-timeout", "approval_timeout")) from None

    # -- %%claude ------------------------------------------------------------------------
    @magic_arguments.magic_arguments()
    @magic_arguments.argument("--session", default="default", help="session name")
    @magic_arguments.argument("--model", default=None,
                              help="model for this session (from the next request on)")
    @magic_arguments.argument("--plan-model", default=None, help="model used while planning")
    @magic_arguments.argument("--fallback-model", default=None, metavar="MODEL",
                              help="model the CLI switches to when the main one is "
                              "overloaded (set when the session starts)")
    @magic_arguments.argument("--mode", default=None, choices=RESTING_MODES,
                              help="resting permission mode: " + MODE_HELP)
    @magic_arguments.argument("--cwd", default=None, help="working directory of the agent")
    @magic_arguments.argument("--new", action="store_true", help="end the session, start anew")
    @magic_arguments.argument("--background", action="store_true",
                              help="return at once instead of waiting")
    @magic_arguments.argument("--plan", action="store_true",
                              help="enter plan mode for this turn (the session stays in plan "
                              "mode until a plan is approved or plan mode is toggled off)")
    @magic_arguments.argument("--scripted", default=None, metavar="FILE",
                              help="answer from a scripted model (offline, no API key)")
    @magic_arguments.argument("--approval-timeout", default=None, type=float, metavar="SECONDS",
                              help="seconds a decision waits before it is denied (from "
                              "now on, for this session)")
    @magic_arguments.argument("--no-kernel-tools", action="store_true",
                              help="start the session without the kernel tools (the agent "
                              "then cannot see variables, run code or propose cells)")
    @magic_arguments.argument("--effort", default=None, choices=EFFORTS,
                              help="how hard the model thinks (a new session's option)")
    @magic_arguments.argument("--add-dir", default=None, action="append", metavar="DIR",
                              help="another folder the agent may use (repeatable; a new "
                              "session's option)")
    @magic_arguments.argument("--allowed-tools", default=None, action="append",
                              metavar="TOOLS", help="tools allowed without asking, e.g. "
                              "'Read,Bash(git:*)' (a new session's option; the policy's "
                              "denied tools still win)")
    @magic_arguments.argument("--append-system-prompt", default=None, metavar="TEXT",
                              help="words added to the system prompt (a new session's option)")
    @magic_arguments.argument("--verbatim", action="store_true",
                              help="send a prompt that starts with / as text, not a command")
    @magic_arguments.argument("--from-plan", default=None, metavar="ID",
                              help="start a new conversation on a kept plan (see %%claude "
                              "plans) as its approved plan: the cell's words, if any, follow "
                              "it")
    @magic_arguments.argument("--resume", default=None, metavar="ID",
                              help="resume a session by its id (see %%claude sessions): the "
                              "CLI keeps its transcript, markers and plans come back from the "
                              "event log (%%config ClaudeMagics.log_dir, else "
                              "$PLAN_WIDGETS_LOG_DIR, else <cwd>/.plan_widgets/sessions)")
    @cell_magic
    def claude(self, line: str, cell: str) -> None:
        """Run the cell's body as one turn of a Claude Code session.

        The cell waits until the turn ends or until a decision (a plan, a question, a tool
        permission) waits for you on a card; widgets stay live meanwhile. Defaults come from
        ``%config ClaudeMagics.<setting>``, one of: {settings}.
        More: ``%claude --help``.
        """
        # In a kernel the cell is rewritten to await run_cell (see transform_cell); this
        # fallback, used when the magic is called directly, starts the turn and returns (a
        # mistake in the line still fails here, in one line).
        if parse(line) is None:
            return
        loop = asyncio.get_event_loop()
        task = loop.create_task(run_cell(line, cell, background=True))
        if not loop.is_running():
            loop.run_until_complete(task)

    # -- %claude ---------------------------------------------------------------------------
    @line_magic("claude")  # type: ignore[arg-type]  # (IPython types it as taking nothing)
    def claude_line(self, line: str) -> Any:
        # its docstring (``%claude?``) is every command of the table: set below the class
        from . import commands  # on first use: %load_ext stays cheap

        try:
            commands.run(self, line)
        except Help as e:
            print(str(e).strip())
        except (Usage, OptionError) as e:  # a mistake fails the cell, in one line
            raise UsageError(one_line(str(e))) from None
        return None


# `%claude?` and `%%claude?` (and `%%claude --help`, argparse's description) say every command
# and every setting: generated from the command table and the traits, so none is left out
# (the ignore: IPython types what line_magic returns as a function taking nothing)
ClaudeMagics.claude_line.__doc__ = command_help.synopsis()  # type: ignore[assignment]
_cell = ClaudeMagics.claude
_cell.parser.description = _cell.parser.description.format(settings=textwrap.fill(
    ", ".join(ClaudeMagics.class_trait_names(config=True)), 88, initial_indent=" " * 48,
    subsequent_indent=" " * 8).lstrip())
_cell.__doc__ = _cell.parser.format_help()


def _magics() -> ClaudeMagics | None:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        return None
    m = ip.magics_manager.registry.get("ClaudeMagics")
    return m if isinstance(m, ClaudeMagics) else None


def parse(line: str) -> Any:
    """The options of a ``%%claude`` line; None after printing the help it asked for. A
    mistake raises :class:`UsageError`: the cell fails, in one line."""
    try:
        return parse_cell_line(ClaudeMagics.claude.parser, line)
    except Help as e:
        print(str(e).rstrip())
        return None
    except Usage as e:
        raise UsageError(one_line(str(e))) from None


async def run_cell(line: str, body: str, background: bool = False) -> None:
    """Body of a ``%%claude`` cell: start the turn, show it, and wait until it settles."""
    args = parse(line)
    if args is None:
        return
    from . import cell  # on first use: %load_ext stays cheap (the store, pydantic)

    await cell.run(args, body, _magics(), background=background)


def transform_cell(lines: list[str]) -> list[str]:
    """Input transformer: a ``%%claude`` cell becomes an awaited call (clicks stay live)."""
    if not lines or not lines[0].startswith(_TRANSFORM_PREFIX):
        return lines
    first = lines[0][len(_TRANSFORM_PREFIX):]
    if first and not first[0].isspace():
        return lines  # some other magic, e.g. %%claudex
    line = first.strip()
    body = "".join(lines[1:])
    arg = repr(line)
    if "$" in line or "{" in line:  # `--cwd $work`, `{expr}`: expanded like any IPython magic
        arg = f"__import__('IPython').get_ipython().var_expand({line!r})"
    return [
        f"await __import__({__name__!r}, fromlist=['run_cell']).run_cell({arg}, {body!r})\n"
    ]


# IPython's check_complete (terminal IPython's Enter key, jupyter console) runs the cleanup
# transforms first and would see the rewritten, complete `await` line: a lone `%%claude` line
# then ran at once with an empty prompt. It skips transforms marked with side effects, and then
# applies its own rule for cell magics: a `%%claude` cell goes on until a blank line, as
# `%%timeit` does. The cell is still rewritten when it runs. (IPython >= 8 honours the mark.)
transform_cell.has_side_effects = True  # type: ignore[attr-defined]


__all__ = ["ClaudeMagics", "run_cell", "transform_cell"]
