"""``%claude status | interrupt | stop | plan on|off``: commands to a session of this kernel.

Each says in one line what it did, or why it did nothing; none claims more than was done (a
mode change is asked, and the marker shows when the CLI confirms it).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..agent.mode_names import mode_title
from ..agent.tasks import spawn
from ..model.agent_options import shown
from ..model.errors import OptionError
from .usage import one_line


def named(mode: str) -> str:
    """A mode as the bar names it (the CLI's UI name), with the SDK's name beside it when they
    differ: ``Manual (default)``, ``Plan``."""
    title = mode_title(mode)
    return title if title.lower() == mode.lower() else f"{title} ({mode})"


def status(args: argparse.Namespace) -> None:
    """The session's state, mode, model and pending decision."""
    s = args.live
    st = s.state
    d = s.pending
    waiting = f", waiting for a {d.kind} decision" if d else ""
    mode = named(st.mode) if st.mode else "not reported yet"
    if st.requested_mode and st.requested_mode != st.mode:
        mode += f" (→ {named(st.requested_mode)} requested)"
    elif st.refused:
        mode += f" (last change refused: {st.refused})"
    print(f"{s.name}: {s.status}{waiting}; mode {mode}; resting {named(s.options.mode)}; "
          f"model {st.model or 'not reported yet'}; {st.turns} turns; ${st.cost_usd:.4f}; "
          f"id {s.session_id}")
    if s.options.agent:
        print(f"agent options: {shown(s.options.agent)}")
    for line in s.options.set_aside:
        print(line)
    if s.dead:
        print(f"ended: {s.dead}")
    if s.log_problem:
        print(s.log_problem)
    from .badday import status_lines

    for line in status_lines(s):
        print(line)


def interrupt(args: argparse.Namespace) -> None:
    """Interrupt the running turn (a pending decision is cancelled)."""
    s = args.live
    not_ended(s, "nothing to interrupt")
    if s.pending is None and not s.busy:
        print(f"{s.name}: no turn is running; nothing to interrupt")
        return
    s.interrupt_nowait()
    print(f"{s.name}: interrupt sent")


def stop(args: argparse.Namespace) -> None:
    """End the session: its decisions are cancelled, the CLI exits."""
    s = args.live
    again = f"%claude resume {s.session_id} continues it"
    if s.closed:
        print(f"{s.name} is already closed (id {s.session_id}; {again})")
        return
    s.end_decisions("close")
    _spawn(s.close())
    if s.dead:
        print(f"{s.name} had already ended ({one_line(s.dead)}); closed it "
              f"(id {s.session_id}; {again})")
    else:
        print(f"{s.name}: stopping (id {s.session_id}; {again})")


def plan(args: argparse.Namespace) -> None:
    """Enter or leave plan mode live."""
    s, switch = args.live, args.switch
    not_ended(s, f"cannot turn plan mode {switch}")
    on = switch == "on"
    target = "plan" if on else s.options.mode
    st = s.state
    if st.mode == target and st.requested_mode in (None, target):
        now = "" if on else f" (mode {named(target)})"
        print(f"{s.name}: plan mode is already {switch}{now}")
    else:
        print(f"{s.name}: plan mode {switch} (asked; the marker shows when the CLI confirms)")
    _spawn(s.set_plan_mode(on), failed=f"%claude plan {switch}")


def not_ended(s: Any, what: str) -> None:
    """One line, not a false promise, when session ``s`` is closed or dead."""
    if s.closed:
        raise OptionError(f"{s.name} is closed: {what} (%claude resume {s.session_id} "
                          "continues it)")
    if s.dead:
        raise OptionError(f"{s.name} has ended ({one_line(s.dead)}): {what} "
                          f"(%claude resume {s.session_id} continues it)")


def _spawn(coro: Any, failed: str | None = None) -> None:
    """Run ``coro`` on the kernel's loop; if it fails, ``failed: <error>`` goes to stderr
    (the cell that asked for it, in ipykernel 7) instead of nowhere."""

    def done(t: asyncio.Task[Any]) -> None:
        e = None if t.cancelled() else t.exception()
        if e is not None and failed is not None:
            print(f"{failed}: {one_line(str(e))}", file=sys.stderr)

    spawn(coro).add_done_callback(done)


def context(args: argparse.Namespace) -> None:
    """How full the context window was after the last turn, by category."""
    s = args.live
    ctx = s.context
    if (ctx is None or ctx.turn < s.state.turns) and not (s.dead or s.closed):
        from IPython.core.async_helpers import get_asyncio_loop

        loop = get_asyncio_loop()  # terminal IPython: the loop runs only in cells; read it now
        if not loop.is_running():
            ctx = loop.run_until_complete(s.context_usage())
    from .badday import compaction

    if ctx is None:
        print(f"{s.name}: not measured yet (the context is read after each turn)")
    else:
        lines = ctx.lines()
        print(f"{s.name}: {ctx.label} after turn {ctx.turn}: {lines[0]}")
        for line in lines[1:]:
            print(f"  {line}")
    last = compaction(s)
    if last:  # when the conversation was last compacted (never: nothing more to say)
        print(last)


def rewind(args: argparse.Namespace) -> None:
    """``%claude rewind [TURN] [--yes]``: list the files a rewind to before TURN (default: the
    last turn that changed files) would put back, then confirm; ``--yes`` confirms at once."""
    s = args.live
    not_ended(s, "cannot rewind its files")
    if args.turn is not None and not args.turn.isdigit():
        raise OptionError(f"%claude rewind: {args.turn!r} is not a turn number")
    number = s.rewind_target(int(args.turn) if args.turn is not None else None)
    if s.current_turn is not None or s.pending is not None:
        raise OptionError(f"{s.name}: a turn is running: rewind its files once it has ended")
    from .output import in_kernel

    if in_kernel():  # it lists the files, then asks (or, --yes, rewinds at once)
        from ..widgets.rewind import rewind_box
        from .output import show_widget

        show_widget(rewind_box(s, number, confirmed=args.yes),
                    f"Rewind files to before turn {number}: %claude rewind {number} --yes")
        return
    _rewind_in_terminal(s, number, args.yes)


def _rewind_in_terminal(s: Any, number: int, yes: bool) -> None:
    """Terminal IPython: its loop runs only during a cell, so run the steps on it here."""
    from IPython.core.async_helpers import get_asyncio_loop

    from ..agent.rewind import NOT_TRACKED

    loop = get_asyncio_loop()
    if loop.is_running():  # a cell with an await in it runs on the loop itself
        raise OptionError(f"%claude rewind: run it in a cell of its own, or "
                          f"await plan_widgets.get({s.name!r}).rewind({number})")
    plan = loop.run_until_complete(s.rewind(number, dry_run=True))
    if not plan.files:
        print(f"{s.name}: nothing to rewind: the files are as they were before turn {number}")
        return
    print(f"Rewind {plan.summary} to before turn {number}:")
    for f in plan.files:
        print(f"  {f}")
    print(NOT_TRACKED)
    if not yes and input("Rewind these files? [y/N] ").strip().lower() not in ("y", "yes"):
        print("Not rewound.")
        return
    done = loop.run_until_complete(s.rewind(number, by="user"))
    print(f"{s.name}: rewound {done.summary} to before turn {number}")
