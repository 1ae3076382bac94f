"""``%claude status | interrupt | stop | plan on|off``: commands to a session of this kernel.

Each says in one line what it did, or why it did nothing; none claims more than was done (a
mode change is asked, and the marker shows when the CLI confirms it).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..agent.tasks import spawn
from ..model.errors import OptionError
from .usage import one_line


def status(args: argparse.Namespace) -> None:
    """The session's state, mode, model and pending decision."""
    s = args.live
    st = s.state
    d = s.pending
    pend = f", waiting for a {d.kind} decision" if d else ""
    mode = st.mode or "not reported yet"
    if st.requested_mode and st.requested_mode != st.mode:
        mode += f" (→ {st.requested_mode} requested)"
    elif st.refused:
        mode += f" (last change refused: {st.refused})"
    print(f"{s.name}: {s.status}{pend}; mode {mode}; resting {s.options.mode}; "
          f"model {st.model or 'not reported yet'}; {st.turns} turns; ${st.cost_usd:.4f}; "
          f"id {s.session_id}")
    if s.dead:
        print(f"ended: {s.dead}")
    if s.log_problem:
        print(s.log_problem)


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
        print(f"{s.name}: plan mode is already {switch}" + ("" if on else f" (mode {target})"))
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
