"""Where an approved plan leads: the card's target picker (issue 22, point 3).

Every mode the CLI can go to, in the order and words of its own plan dialog
(:data:`~plan_widgets.agent.mode_names.APPROVAL_TARGETS`; Bypass Permissions only in a session
that rests in it), the one chosen last in this session first and picked; else the session's
resting mode is picked. **Approve** and **Approve, start fresh** go into the mode picked;
**Approve, auto-accept edits** stays the one-click shortcut.
One widget model (a ``Dropdown``), made with the card.
"""

from __future__ import annotations

import ipywidgets as w

from ...agent.decisions import PlanDecision
from ...agent.mode_names import approval_targets, mode_title, mode_tooltip
from ..shared import look, on_change


def target_picker(d: PlanDecision) -> w.Dropdown:
    """The picker of the mode an approval leads to."""
    options = [(label, mode) for mode, label in approval_targets(d.last_target,
                                                                   d.resting_mode)]
    value = d.last_target or d.resting_mode
    if value not in [m for _label, m in options]:
        value = options[0][1]
    picker = w.Dropdown(options=options, value=value, _dom_classes=("pw-approve-into",),
                        tooltip=mode_tooltip(value),  # in its comm_open, not a second message
                        **look("auto", "radio"))
    on_change(picker, lambda ch: setattr(picker, "tooltip", mode_tooltip(ch["new"])), "value")
    return picker


def into(mode: str) -> str:
    """The Approve button's tooltip: where it leads (the CLI's name, then the SDK's)."""
    return f"Leave plan mode into {mode_title(mode)} ({mode})"
