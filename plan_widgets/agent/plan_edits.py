"""What a plan decision knows about edits and revisions (issue 13), mixed into
:class:`~plan_widgets.agent.decisions.PlanDecision`.

- An edit: ``approve(plan=edited)`` sends ExitPlanMode's own input back with the edited
  ``plan`` in it; this CLI then writes it to the plan file and tells the model "## Approved
  Plan (edited by user):" followed by it (notes m13, section 2). The outcome keeps the text.
- A revision: a plan proposed after the one before it was sent back with Keep planning
  ``previous`` is that one (the card shows what changed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .decisions import Outcome, PlanDecision

EMPTY_EDIT = "the edited plan is empty: write the plan, or approve it as proposed"


def _normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class PlanEdits:
    """Edits and revisions of a plan decision (a mixin: the decision has ``plan``,
    ``outcome`` and ``previous``)."""

    plan: str
    outcome: Outcome | None
    previous: PlanDecision | None

    @property
    def previous_plan(self) -> str | None:
        """The text of the plan this one revises (for the Changes view), if any."""
        return self.previous.plan if self.previous is not None else None

    @property
    def edited(self) -> bool:
        """Whether the user edited the plan before approving it."""
        o = self.outcome
        return o is not None and o.status == "approved" and o.plan is not None

    @property
    def approved_plan(self) -> str | None:
        """The text approved (the edit, if the user edited it); None unless approved."""
        o = self.outcome
        if o is None or o.status != "approved":
            return None
        return o.plan if o.plan is not None else self.plan

    def edit_of(self, plan: str | None) -> str | None:
        """``plan`` as an edit of this plan: None if it changes nothing (or is None); raises
        ValueError (one line) if it is empty."""
        if plan is None:
            return None
        if not isinstance(plan, str):
            raise ValueError("the edited plan must be text")
        if not plan.strip():
            raise ValueError(EMPTY_EDIT)
        text = _normal(plan)
        return None if text.strip() == _normal(self.plan).strip() else text

    def unsent(self, edit: str | None) -> str | None:
        """An edit that Keep planning leaves unsent (None if there is none to mention)."""
        return edit if edit is not None and _normal(edit).strip() != _normal(
            self.plan).strip() else None
