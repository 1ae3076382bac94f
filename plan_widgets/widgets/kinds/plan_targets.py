"""Where an approved plan leads: the card's target picker (issue 22, point 3; issue 43, point 5).

Every mode the CLI can go to, in the order and words of its own plan dialog
(:data:`~plan_widgets.agent.mode_names.APPROVAL_TARGETS`; Bypass Permissions only in a session
that rests in it), the one chosen last in this session first and picked; else the session's
resting mode is picked. Beside each mode but the resting one, the same mode "for this plan
only": the session goes back to its resting mode once the plan's work ends
(agent/plan_scope.py). **Approve** and **Approve, start fresh** go into the mode picked;
**Approve, auto-accept edits** stays the one-click shortcut.
One widget model (a ``Dropdown``, its values ``(mode, only)``), made with the card: the choice
costs no model more.
"""

from __future__ import annotations

import ipywidgets as w

from ...agent.decisions import PlanDecision
from ...agent.mode_names import approval_targets, mode_title, mode_tooltip, only_label
from ..shared import look, on_change

Target = tuple[str, bool]
"""A picked target: the mode, and whether it is for this plan only."""


def target_picker(d: PlanDecision) -> w.Dropdown:
    """The picker of the mode an approval leads to."""
    options: list[tuple[str, Target]] = []
    for mode, label in approval_targets(d.last_target, d.resting_mode):
        options.append((label, (mode, False)))
        if mode != d.resting_mode:
            options.append((only_label(label, d.resting_mode), (mode, True)))
    value = (d.last_target or d.resting_mode, d.last_only and d.last_target != d.resting_mode)
    if value not in [t for _label, t in options]:
        value = options[0][1]
    picker = w.Dropdown(options=options, value=value, _dom_classes=("pw-approve-into",),
                        tooltip=tip(value),  # in its comm_open, not a second message
                        **look("auto", "radio"))
    on_change(picker, lambda ch: setattr(picker, "tooltip", tip(ch["new"])), "value")
    return picker


def tip(target: Target) -> str:
    """The picker's tooltip: the mode's SDK name, and the return if for this plan only."""
    mode, only = target
    return mode_tooltip(mode) + ("; for this plan only: back to the resting mode once its work "
                                 "ends" if only else "")


def into(target: Target, resting: str) -> str:
    """The Approve button's tooltip: where it leads (the CLI's name, then the SDK's)."""
    mode, only = target
    then = f", for this plan only (then {mode_title(resting)})" if only else ""
    return f"Leave plan mode into {mode_title(mode)} ({mode}){then}"
