"""One ``%%claude`` cell: find its session, show the turn, ask, and wait until it settles.

The cell returns when the turn ends, or when a decision waits on a card (widgets stay live
meanwhile) and no cell waits behind it; with cells queued behind it (Run All) it waits for the
whole turn, decisions included, where a click can reach a busy kernel (ipython/runall.py). In
a terminal it waits for the whole turn (decisions are asked at the prompt).
A cell that did not do its work fails, in one line, so Run All, papermill and nbconvert stop
there: a mistake (``UsageError``), a session that cannot start (``SessionError``), a turn
that ended in an error while the cell waited (``TurnError``), the kernel's stop button
(``Interrupted``: the turn is interrupted, or a prompt still queued withdrawn). What the turn
showed stays above the line.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Any

from ..agent import wording
from ..agent.tasks import spawn
from ..model.errors import Interrupted, OptionError, PlanWidgetsError, SessionError, TurnError
from . import registry as _registry
from .obtain import configured, from_cell, obtain
from .output import in_kernel
from .resume import show_resumed
from .usage import UsageError, one_line

log = logging.getLogger("plan_widgets")


async def run(args: argparse.Namespace, body: str, config: Any = None, *,
              background: bool = False) -> None:
    """Run a cell's turn (``args``: the parsed ``%%claude`` line; ``config``: the
    ``ClaudeMagics``, or None outside IPython)."""
    kept = None
    if getattr(args, "from_plan", None):
        body, kept = _from_plan(args, body, config)
    if not body.strip():
        raise UsageError("%%claude: the prompt is empty: write what Claude should do below the "
                         "%%claude line")
    from . import unattended

    unattended.check_settings()  # a malformed rule fails the cell, in one line
    session = await _session(args, config)
    if kept is not None:
        _carrying_out(kept, session)
    unattended.attach(session)
    unattended.raise_failures(session)  # e.g. a background agent's, since the last cell
    if config is not None and session.options.show_thinking != config.show_thinking:
        session.update_options(show_thinking=bool(config.show_thinking))
    if not args.resume:
        # A new session's owner task spawns its processes first; the widgets are built while
        # they boot (docs/benchmarks.md, figure 1).
        await asyncio.sleep(0)
    kernel = in_kernel()
    if args.resume and not session.connected:  # just resumed (not already running)
        show_resumed(session)
    blocked = _blocked(session, kernel)
    view, handle = _show_turn(session, body, blocked, kernel)
    _between_cells(session, view, kernel)
    turn = _ask(session, body, args, view, handle)
    if turn is None or blocked is not None:
        return
    if background or args.background or (config is not None and not config.wait):
        return
    from .kernel.tools import cell_waiting

    # no one to click: wait for the whole turn, so an executor records it in this cell
    whole = not await unattended.someone_can_click()
    with cell_waiting(session.name):  # code the agent proposes meanwhile goes below this cell
        await _wait(session, turn, view, handle, kernel and not whole)
    if whole:
        unattended.raise_failures(session)
    _raise_error(turn)


def _from_plan(args: argparse.Namespace, body: str, config: Any) -> tuple[str, Any]:
    """``--from-plan ID``: the kept plan as the prompt of a new conversation (ipython/plans.py)."""
    from .plans import carry_out

    try:
        return carry_out(args, body, config)
    except OptionError as e:
        raise UsageError(f"%%claude: {one_line(str(e))}") from None


def _carrying_out(kept: Any, session: Any) -> None:
    """Say which kept plan the new conversation carries out, and keep that on the plan."""
    from ..store.plans import carried_out

    print(f"Carrying out kept plan {kept.id} ({kept.status}, from session {kept.session} "
          f"{kept.session_id[:8]}) in a new conversation, {session.session_id[:8]}.")
    try:
        carried_out(kept.folder, kept.id, session.session_id)
    except OSError as e:
        log.error("cannot note on kept plan %s that it is carried out: %s", kept.id, e)


def _raise_error(turn: Any) -> None:
    """A turn that ended in an error while its cell waited fails the cell (the turn's view
    shows the error too). An interrupt from the bar or ``%claude interrupt`` is the person's
    own choice, made where they see it: the turn says "Interrupted." and the cell is ok. So is
    a turn the CLI calls failed only because it refused some of the agent's actions (plan
    mode's Bash or Agent: ``[auto_mode_unchecked]``): the agent went on to its reply, and the
    tool lines say what was refused."""
    if turn.done and turn.error and turn.error != wording.INTERRUPTED \
            and not wording.refusals_only(turn.error):
        raise TurnError(f"the turn ended in an error: {one_line(turn.error)}")


async def _session(args: argparse.Namespace, config: Any) -> Any:
    """The cell's session (reused, adjusted or started). An option that cannot be met (a
    folder, the CLI's path, credentials, the policy) raises ``UsageError``; a session that
    cannot start raises its ``SessionError``: one line each."""
    try:  # where options come from, merge, and apply: ipython/obtain.py
        defaults, wanted = configured(config), from_cell(args)
        session, notes = await obtain(args.session, wanted, defaults, new=args.new)
    except OptionError as e:
        raise UsageError(f"%%claude: {one_line(str(e))}") from None
    for n in notes:
        print(n)
    return session


def _blocked(session: Any, kernel: bool) -> Any:
    """The decision this cell's prompt waits behind, if any (said in one line)."""
    blocked = session.pending
    if blocked is not None:
        print(f"A decision is pending ({blocked.kind}); this prompt runs after it"
              + (". Its card again (either copy decides):" if kernel else "."))
    return blocked


def _show_turn(session: Any, body: str, blocked: Any, kernel: bool) -> tuple[Any, Any]:
    """The turn's view, and the cell's display handle (None in a terminal)."""
    if not kernel:
        from .textview import TextTurnView

        return TextTurnView(), None
    from ..widgets import WidgetTurnView, show_card

    if blocked is not None:  # its card may be gone (this cell re-run, its output cleared)
        show_card(blocked)  # (static once decided)
    view = WidgetTurnView(session, body, _registry.control_bar(session))
    return view, view.show()  # the control bar, then the turn (static once it has ended)


def _between_cells(session: Any, view: Any, kernel: bool) -> None:
    """What arrives while no cell runs (a turn the CLI starts by itself, a background
    agent's card) is shown below this cell's turn, the session's newest (widgets/follow.py);
    in a terminal it is printed under a line naming it."""
    if kernel:
        session.show_between_cells(view.follow)
    else:
        session.show_between_cells(_text_between_cells)


def _text_between_cells(title: str) -> Any:
    from .textview import TextTurnView

    view = TextTurnView()
    view.out.line(f"-- {title} --", style="bold")  # (made terminal-safe by the line)
    return view


def _ask(session: Any, body: str, args: argparse.Namespace, view: Any, handle: Any) -> Any:
    """Queue the prompt; the turn, or None after saying why it could not start."""
    try:
        turn = session.ask(body, view=view, plan=args.plan,
                           verbatim=bool(getattr(args, "verbatim", False)))
    except Exception as e:  # e.g. the session died while starting: say so where it shows
        if handle is not None:
            view.error(str(e)[:1].upper() + str(e)[1:] + ".")
            view.turn_done()
        if isinstance(e, OptionError):
            raise UsageError(f"%%claude: {one_line(str(e))}") from None
        raise e if isinstance(e, PlanWidgetsError) else SessionError(one_line(str(e))) from None
    if handle is not None:  # once ended, the turn's output becomes static (widgets closed)
        turn.add_done_callback(lambda _t: view.turn_done())
    return turn


async def _wait(session: Any, turn: Any, view: Any, handle: Any, kernel: bool) -> None:
    """Wait for the turn to settle (a terminal: to end); the stop button interrupts it."""
    try:
        if kernel:
            await session.settle(turn)
            if not turn.done and session.pending is not None and _cells_wait_behind():
                # Run All: the cells below must see this step's work (ipython/runall.py)
                while not turn.done:  # each decision ends by a click, its timeout, the
                    await session.next_change(0.25)  # stop button or a close; the tick lets
                    # an interrupt in (see Session.settle)
        else:  # in a terminal, wait for the whole turn (decisions at the prompt)
            await turn
    except (KeyboardInterrupt, asyncio.CancelledError):
        if not session.connected and session.withdraw(turn, wording.INTERRUPTED_STARTING):
            spawn(session.close())  # a CLI still starting is stopped, never left half-up
            view.error(wording.INTERRUPTED_STARTING)
            raise Interrupted("while the session was starting: nothing was sent; run the "
                              "cell again") from None
        if session.withdraw(turn):  # still waiting for its turn: it must never run later
            view.error("Interrupted before it started: this prompt was not sent.")
            raise Interrupted("this prompt was not sent") from None
        session.interrupt_nowait()
        raise Interrupted("the turn was stopped and any pending decision cancelled") from None
    finally:
        if handle is not None and not turn.done:
            if session.pending is not None and hasattr(view, "cell_returned"):
                view.cell_returned()  # the turn's view says a decision waits, while it does
            _refresh(handle, view)


def _cells_wait_behind() -> bool:
    """Whether cells wait behind this one (Run All) and a click can come meanwhile; when
    they wait but no click can come, they run on, and one line says so."""
    from . import runall

    if not runall.cells_queued():
        return False  # run by hand: the person's next cell runs at once
    if runall.clicks_reach_busy_cell():
        return True
    print(runall.NOTICE)
    return False


def _refresh(handle: Any, view: Any) -> None:
    """Update the cell's display (widget view plus Markdown and text fallbacks)."""
    try:
        handle.update(view.mimebundle(), raw=True)
    except Exception:  # a closed frontend channel must not break the turn
        log.debug("could not update the cell's display", exc_info=True)
