"""What a plan decision knows about edits and revisions (issue 13), mixed into
:class:`~plan_widgets.agent.decisions.PlanDecision`.

- An edit: ``approve(plan=edited)`` sends ExitPlanMode's own input back with the edited
  ``plan`` in it; this CLI then writes it to the plan file and tells the model "## Approved
  Plan (edited by user):" followed by it (docs/cli.md#plan-mode). The outcome keeps the text.
- A revision: a plan proposed after the one before it was sent back with Keep planning
  ``previous`` is that one (the card shows what changed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from .comments import CommentError, PlanComment, feedback_with, make_comment, touched
from .outcome import Outcome
from .seam import Answer, Deny

FRESH_STOP = ("The user approved this plan and starts a fresh conversation to implement it: "
              "stop here, do not implement it in this conversation.")
"""Approve, start fresh (:mod:`.handoff`): what the planning conversation's model reads (its
turn is interrupted)."""
EMPTY_EDIT = "the edited plan is empty: write the plan, or approve it as proposed"


def _normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class PlanEdits:
    """Edits and revisions of a plan decision (a mixin: the decision has ``plan``,
    ``outcome`` and ``previous``)."""

    plan: str
    outcome: Outcome | None
    previous: PlanEdits | None
    on_comment: Callable[[PlanComment, bool], object] | None = None
    """Told of each comment added (True) or taken back (False): the session logs it."""

    fresh: bool = False
    """Approved to start fresh (:mod:`.handoff`): the plan runs in a new conversation."""
    handoff: Any = None
    """That start-fresh (a :class:`~.handoff.Handoff`: ``.turn`` is the plan's new turn)."""
    resting_mode: str
    last_target: str | None = None
    """The mode the user approved the session's last plan into (offered first)."""
    last_only: bool = False
    """... and whether for that plan only (picked again)."""

    if TYPE_CHECKING:  # the decision's own (PlanDecision defines both)
        def _notify(self) -> None: ...  # redraws its card

        def approve(self, mode: str | None = None, *, plan: str | None = None,
                    by: Literal["user", "code"] = "code", only: bool = False) -> bool: ...

    # -- approve, start fresh (agent/handoff.py) ----------------------------------------------
    def approve_fresh(self, mode: str | None = None, *, plan: str | None = None,
                      by: Literal["user", "code"] = "code", only: bool = False) -> bool:
        """Approve, start fresh: the plan (``plan``: your edit of it) becomes the first message
        of a new conversation in ``mode`` (default: the resting mode); the planning
        conversation's context is dropped. The session keeps its name; its ``handoff.turn``
        is the plan's turn. ``only``: ``mode`` for this plan only (as :meth:`approve`)."""
        if self.outcome is not None:
            return False
        self.fresh = True
        try:
            done = self.approve(mode, plan=plan, by=by, only=only)
        finally:
            self.fresh = self.outcome is not None and self.outcome.status == "approved"
        return done

    def cli_answer(self, approval_timeout: float) -> Answer:
        """As every decision's, except that a fresh start stops the planning conversation."""
        o = self.outcome
        if self.fresh and o is not None and o.status == "approved":
            return Deny(FRESH_STOP, interrupt=True)
        return super().cli_answer(approval_timeout)  # type: ignore[misc]

    # -- comments on the plan's lines (agent/comments.py) -------------------------------------
    @property
    def comments(self) -> list[PlanComment]:
        """The user's comments on this plan's lines, in the order given."""
        return self.__dict__.setdefault("_comments", [])

    def comment(self, line_or_text: int | str, note: str) -> PlanComment:
        """Comment on a line of the plan (its number or its text; a heading: its section).
        Keep planning sends every comment with the line it quotes. Raises
        :class:`~plan_widgets.agent.comments.CommentError` (one line) and keeps nothing if
        the comment is empty, too long, or names no line of the plan."""
        if self.outcome is not None:
            raise CommentError("the plan was already decided: comment on the plan that "
                               "waits for you")
        c = make_comment(self.plan, line_or_text, note, len(self.comments))
        self.comments.append(c)
        if self.on_comment is not None:
            self.on_comment(c, True)
        self._notify()
        return c

    def uncomment(self, comment: PlanComment) -> bool:
        """Take a comment back (before the plan is decided)."""
        if self.outcome is not None or comment not in self.comments:
            return False
        self.comments.remove(comment)
        if self.on_comment is not None:
            self.on_comment(comment, False)
        self._notify()
        return True

    def feedback_for(self, feedback: str) -> str:
        """Keep planning's text: the comments with their lines, then ``feedback``."""
        return feedback_with(self.comments, feedback)

    def previous_comments(self) -> list[tuple[PlanComment, bool]]:
        """The comments on the plan this one revises, each with whether this revision
        changed its line (the Changes view shows them)."""
        prev = self.previous
        if prev is None or not prev.comments:
            return []
        hit = touched(prev.plan, self.plan, prev.comments)
        return [(c, hit.get(c.line, False)) for c in prev.comments]

    def comment_record(self) -> list[dict[str, Any]]:
        return [c.as_dict() for c in self.comments]

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
