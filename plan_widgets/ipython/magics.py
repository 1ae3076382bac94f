"""``%%claude`` and ``%claude``: argument parsing, configuration, and the awaiting cell.

IPython does not await an ``async def`` magic, so ``%%claude`` cells are rewritten by an input
transformer into ``await run_cell(line, body)``: the cell then waits without blocking the
event loop, and widget clicks stay live while it waits (ipykernel 7).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from typing import Any

from IPython.core import magic_arguments
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import HTML
from traitlets import Bool, CFloat, Enum, TraitError, Unicode, validate

from ..model.errors import OptionError, SessionError
from ..model.options import DEFAULT_APPROVAL_TIMEOUT, RESTING_MODES, check_timeout

_TRANSFORM_PREFIX = "%%claude"


class _Usage(Exception):
    """A usage error or a --help request; the message is printed, not raised."""


def _parser_exit(self: Any, status: int = 0, message: str | None = None) -> None:
    raise _Usage(message or "")


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
    @magic_arguments.argument("--mode", default=None, choices=RESTING_MODES,
                              help="resting permission mode (default: default)")
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
        ``%config ClaudeMagics.<option>`` (model, plan_model, mode, approval_timeout, log_dir,
        scripted, wait). More: ``%claude --help``.
        """
        # In a kernel the cell is rewritten to await run_cell (see transform_cell); this
        # fallback, used when the magic is called directly, starts the turn and returns.
        loop = asyncio.get_event_loop()
        task = loop.create_task(run_cell(line, cell, background=True))
        if not loop.is_running():
            loop.run_until_complete(task)

    # -- %claude ---------------------------------------------------------------------------
    @line_magic("claude")
    def claude_line(self, line: str) -> Any:
        """%claude status | interrupt | stop | sessions | plan on|off | resume [ID] | log |
        cost [--session NAME]"""
        from . import commands as _commands

        try:
            return _commands.run(self, line)
        except (_Usage, OptionError) as e:
            msg = str(e).strip()
            if msg:
                print(msg, file=sys.stderr if not msg.startswith("usage") else sys.stdout)
        return None


def _parse(line: str) -> Any:
    parser = ClaudeMagics.claude.parser  # type: ignore[attr-defined]
    parser.exit = _parser_exit.__get__(parser)
    parser.error = lambda message: (_ for _ in ()).throw(  # type: ignore[assignment]
        _Usage(f"{_usage_line(parser)}\n%%claude: {message} (see %%claude --help)")
    )
    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise _Usage(f"%%claude: {e}") from e
    if any(a in ("-h", "--help") for a in argv):
        help_text = parser.format_help()
        body = help_text.split("\n\n", 2)[-1] if help_text.startswith("::") else help_text
        raise _Usage(f"{_usage_line(parser)}\n\n{body}")
    return parser.parse_args(argv)


def _usage_line(parser: Any) -> str:
    """``usage: %%claude [--session SESSION] ...`` (IPython's parser formats it as a docstring)."""
    text = " ".join(parser.format_usage().replace("::", " ").split())
    if text.startswith("%claude"):
        text = "%" + text
    return f"usage: {text}"


def _magics() -> ClaudeMagics | None:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        return None
    m = ip.magics_manager.registry.get("ClaudeMagics")
    return m if isinstance(m, ClaudeMagics) else None


def in_kernel() -> bool:
    """Whether we run in a Jupyter kernel (widgets possible), not terminal IPython."""
    from IPython import get_ipython

    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


async def run_cell(line: str, body: str, background: bool = False) -> None:
    """Body of a ``%%claude`` cell: start the turn, show it, and wait until it settles."""
    from . import registry as _registry

    try:
        args = _parse(line)
    except _Usage as e:
        print(str(e).rstrip())
        return
    if not body.strip():
        print("%%claude: the prompt is empty: write what Claude should do below the %%claude line",
              file=sys.stderr)
        return
    m = _magics()
    defaults = {
        "model": m.model if m else None,
        "plan_model": m.plan_model if m else None,
        "mode": m.mode if m else None,
        "approval_timeout": m.approval_timeout if m else None,
        "log_dir": m.log_dir if m else None,
        "scripted": m.scripted if m else None,
    }
    wanted = {
        "model": args.model, "plan_model": args.plan_model, "mode": args.mode, "cwd": args.cwd,
        "scripted": args.scripted, "approval_timeout": args.approval_timeout,
        "resume": args.resume,
    }
    try:
        session, notes = await _registry.obtain(args.session, wanted, defaults, new=args.new)
    except (OptionError, SessionError) as e:
        print(f"%%claude: {e}", file=sys.stderr)
        return
    for n in notes:
        print(n)
    if not args.resume:
        # A new session's owner task spawns its processes first; the widgets are built while
        # they boot (docs/benchmarks.md, figure 1).
        await asyncio.sleep(0)
    kernel = in_kernel()
    if args.resume and not session.connected:  # just resumed (not already running)
        from .commands import show_resumed

        show_resumed(session)
    blocked = session.pending
    if blocked is not None:
        print(f"A decision is pending ({blocked.kind}); this prompt runs after it"
              + (". Its card again (either copy decides):" if kernel else "."))
    if kernel:
        from ..widgets import WidgetTurnView, show_card

        if blocked is not None:  # its card may be gone (this cell re-run, its output cleared)
            show_card(blocked)
        view: Any = WidgetTurnView(session, body, _registry.control_bar(session))
        handle = view.show()  # the control bar, then the turn (static once it has ended)
    else:
        from .textview import TextTurnView

        view = TextTurnView()
        handle = None
    try:
        turn = session.ask(body, view=view, plan=args.plan)
    except Exception as e:  # e.g. the session died while starting: say so where it shows
        if handle is None:
            print(f"%%claude: {e}", file=sys.stderr)
        else:
            view.error(str(e)[:1].upper() + str(e)[1:] + ".")
            view.turn_done()
        return
    if handle is not None:  # once ended, the turn's output becomes static (widgets closed)
        turn.add_done_callback(lambda _t: view.turn_done())
    if background or args.background or (m is not None and not m.wait):
        return
    if blocked is not None:
        return
    waiting = not kernel  # in a terminal, wait for the whole turn (decisions at the prompt)
    try:
        if waiting:
            await turn
        else:
            await session.settle(turn)
    except (KeyboardInterrupt, asyncio.CancelledError):
        if session.withdraw(turn):  # still waiting for its turn: it must never run later
            view.error("Interrupted before it started: this prompt was not sent.")
            print("Interrupted: this prompt was not sent.")
        else:
            session.interrupt_nowait()
            print("Interrupted: the turn was stopped and any pending decision cancelled.")
    finally:
        if handle is not None and not turn.done:
            _refresh(handle, view)
    if not turn.done and session.pending is not None and kernel:
        d = session.pending
        print(f"Waiting for your decision ({d.kind}) on the card above; the turn goes on "
              f"after it. It expires in {session.options.approval_timeout:g} s.")


def _refresh(handle: Any, view: Any) -> None:
    """Update the cell's display (widget view plus Markdown and text fallbacks)."""
    try:
        handle.update(view.mimebundle(), raw=True)
    except Exception:  # a closed frontend channel must not break the turn
        pass


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
        "await __import__('plan_widgets.ipython.magics', fromlist=['run_cell'])"
        f".run_cell({arg}, {body!r})\n"
    ]


def _now() -> str:
    return time.strftime("%H:%M:%S")


__all__ = ["ClaudeMagics", "HTML", "run_cell", "transform_cell"]
