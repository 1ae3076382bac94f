"""The plan card's fixed controls, opened ahead of the card (issue 46: the card under 8 ms).

A plan card's buttons and feedback field are the same for every plan: Edit, Comment on a line,
the feedback field, Approve, Approve, auto-accept edits, Approve, start fresh, Keep planning.
Made when the ``ExitPlanMode`` request is read, each is a widget model whose ``comm_open`` the
card's own ``comm_open`` waits behind (ipywidgets opens a box's children first): 7 of the 10
before it, about 0.3-0.5 ms of the kernel's main thread each and as many messages for the iopub
thread to send ahead of the card (docs/benchmarks.md, figure 2, issue 46).

So one set of them is opened ahead (:func:`ready`), while the model writes: the turn view asks
for it whenever a model message starts while plan mode is in force (a plan may follow; the
plan itself comes later, in the ``ExitPlanMode`` request, after one more model call in the
usual flow: the plan file's Write). The next plan card in this kernel takes them
(:func:`take`) and opens only what is its own: the plan, the Approve target picker, the status
line, the box. A control not ready (plan mode entered in the same message, a closed model) is
made by the card as before: the same constructor, so the same look and the same DOM.

A spare is never shown (no display names it, no box holds it) and has no callback (the card
that takes it registers them); it is taken once. A set nobody took is closed when the turn that
last asked for it ends (:func:`release`: a turn in plan mode that answered without a plan, an
interrupt, a close), so at most one set is open per kernel (7 models) and none outlives its
turn: a kernel that never gets a plan keeps none between turns. The usual flow loses nothing by
it: the plan's card comes in the turn whose messages opened its controls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..shared import look, typed_area
from .plan_targets import into

MAKERS: dict[str, Callable[[str], w.Widget]] = {
    "edit": lambda _rest: w.Button(description="Edit", icon="edit",
                                   tooltip="Edit the plan's Markdown before approving it",
                                   **look("auto", "button")),
    "comment": lambda _rest: w.Button(description="Comment on a line", icon="comment",
                                      tooltip="Show the plan line by line: click a line to "
                                      "comment on it", **look("auto", "button")),
    "feedback": lambda _rest: typed_area(
        placeholder="What should change? (feedback for the agent)", rows=3),
    "approve": lambda rest: w.Button(description="Approve", button_style="success",
                                     icon="check",
                                     tooltip=into((rest, False), rest),  # (the card's own
                                     **look("auto", "button-success")),  # target: set after)
    "edits": lambda _rest: w.Button(description="Approve, auto-accept edits",
                                    button_style="info", icon="check-double",
                                    **look("auto", "button-info")),
    "fresh": lambda _rest: w.Button(  # agent/handoff: the plan opens a new conversation
        description="Approve, start fresh", button_style="success", icon="refresh",
        tooltip="Run the plan in a new conversation (the planning context is dropped)",
        **look("auto", "button-success")),
    "keep": lambda _rest: w.Button(description="Keep planning", button_style="warning",
                                   icon="pencil", **look("auto", "button-warning")),
}
"""Each fixed control of a plan card, made for a session resting in the mode given."""
_SPARE: dict[str, w.Widget] = {}
_ASKED: list[Any] = [None]  # who asked for the set last (a turn's view): it releases it


def needed(resting_mode: str) -> tuple[str, ...]:
    """The fixed controls of a plan card in a session resting in ``resting_mode`` (no
    auto-accept shortcut where edits are auto-accepted already)."""
    return tuple(n for n in MAKERS if n != "edits" or resting_mode != "acceptEdits")


def ready(resting_mode: str, owner: Any = None) -> int:
    """Open the fixed controls a plan card of a session resting in ``resting_mode`` would take
    and that are not open yet; returns how many were opened. ``owner`` (a turn's view) is the
    one whose end closes them if no card took them (:func:`release`)."""
    _ASKED[0] = owner
    made = 0
    for name in needed(resting_mode):
        spare = _SPARE.get(name)
        if spare is None or spare.comm is None:  # none yet, or closed (Widget.close_all)
            _SPARE[name] = MAKERS[name](resting_mode)
            made += 1
    return made


def release(owner: Any) -> int:
    """``owner``'s turn ended: close the spares no card took, if ``owner`` asked for them last
    (another turn still running may take them otherwise). Returns how many were closed."""
    if _ASKED[0] is not owner:
        return 0
    _ASKED[0] = None
    closed = 0
    for spare in _SPARE.values():
        if spare.comm is not None:  # (shared layouts and styles are not theirs to close)
            spare.close()
            closed += 1
    _SPARE.clear()
    return closed


def take(name: str, resting_mode: str) -> w.Widget:
    """The control ``name`` for a card: the spare if one is open (it is the card's from now
    on), else a new one."""
    spare = _SPARE.pop(name, None)
    if spare is not None and spare.comm is not None:
        return spare
    return MAKERS[name](resting_mode)
