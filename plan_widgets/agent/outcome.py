"""How a decision ended: the one record every decision kind fills in when it closes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model.events import Actor

Places = tuple[int, ...] | None


@dataclass(frozen=True)
class Outcome:
    """How a decision ended."""

    status: str
    """plan: approved/rejected; question: answered; tool: allowed/always/denied;
    any kind: expired/cancelled."""
    by: Actor
    mode: str | None = None
    back_to: str | None = None
    """Plans approved for this plan only: the resting mode to go back to after its work."""
    feedback: str | None = None
    answers: dict[str, str] | None = None
    notes: dict[str, str] | None = None
    """Questions: the user's optional notes, keyed by question text."""
    headers: dict[str, str] | None = None
    """Questions: each question's short header ("Color"), keyed by question text: what a
    summary names a question by (the model still reads the whole question)."""
    at: float = field(default_factory=time.time)
    plan: str | None = None
    """Plans: the user's edit. Approved: the text approved (None: as proposed); sent back:
    an edit the user had open, which was not sent."""
    rule: str | None = None
    """The unattended rule or Python decider that made this decision (None: someone did)."""
    applied: tuple[int, ...] | None = None
    """Tools allowed "always": which of the CLI's suggested updates were taken (their places
    in its list; None: all of them)."""
    said: str | None = None
    """Plans sent back: the feedback as the user typed it (``feedback`` is what the model
    reads: the comments with their lines, then this); the card shows this."""

    @property
    def granted(self) -> bool:
        """Whether the agent may go ahead (only ever true for an explicit user action)."""
        return self.status in ("approved", "answered", "allowed", "always")


def granted(always: bool, only: Sequence[int] | None, offered: int) -> tuple[str, Places]:
    """A tool allowed: "always" with the places of the ``offered`` suggested updates taken
    (None: all of them), or "allowed" (this call only). A place not offered is an error."""
    picked = None if only is None else tuple(sorted(set(only)))
    if picked and not set(picked) <= set(range(offered)):
        raise ValueError(f"only={list(picked)}: it has {offered} suggestions")
    if picked if picked is not None else (always and offered):
        return "always", picked
    return "allowed", None
