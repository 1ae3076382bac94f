"""How a decision ended, in words: one module for every outcome a user reads.

Two readers, two needs: a card (and its static copy) says what just happened to a live
decision (:func:`outcome_parts`), and the history (``%claude resume``, the log's tables) says
how a logged decision ended (:func:`decision_status`). Plain text: the caller escapes it.
"""

from __future__ import annotations

from typing import Any

from ..agent.decisions import Outcome
from ..agent.mode_names import mode_title
from .markdown import summarize

MAX_SAID = 2000
"""Characters of the user's own feedback a card's status line repeats."""
_OUTCOME_TEXT = {
    "approved": "Approved",
    "rejected": "Sent back: keep planning",
    "answered": "Answered",
    "allowed": "Allowed",
    "always": "Allowed, with the updates named above",
    "denied": "Denied",
    "expired": "Expired: no answer came, so it was denied",
    "cancelled": "Cancelled, so it was denied",
}
_ENDED_TEXT = {
    # (status, by) when the actor changes what happened, not only why
    ("expired", "cli"): "Expired: the Claude Code CLI exited, so it was denied",
    ("cancelled", "cli"): "Cancelled: withdrawn by the CLI, so it was denied",
    ("expired", "restart"): "Expired: the kernel restarted before an answer came",
    ("cancelled", "unattended"): "Not decided: no one could click in this unattended run and no "
                                 "rule decided it, so it was denied",
}
_BY_TEXT = {
    "timeout": "timed out",
    "interrupt": "interrupted",
    "close": "session closed",
    "cli": "withdrawn by the CLI",
    "restart": "the kernel restarted",
    "gate": "refused by the gate",
}


def outcome_parts(o: Outcome) -> tuple[str, list[str]]:
    """What an outcome says: the headline and its details (plain text)."""
    text = _ENDED_TEXT.get((o.status, o.by)) or _OUTCOME_TEXT.get(o.status, o.status)
    extra = []
    if o.rule:  # an unattended rule or a Python decider (docs/unattended.md)
        name = o.rule.removeprefix("decider:")
        extra.append(f"by the Python decider `{name}`" if name != o.rule
                     else f"by the unattended rule `{o.rule}`")
    if o.by in _BY_TEXT and (o.status, o.by) not in _ENDED_TEXT:
        extra.append(_BY_TEXT[o.by])
    if o.mode and o.status == "approved":
        extra.append(f"next mode: {mode_title(o.mode)}"  # as the bar's marker names it
                     + (f", for this plan only (then {mode_title(o.back_to)})" if o.back_to
                        else ""))
    if o.plan is not None and o.status == "approved":
        extra.append("edited by you")
    if o.plan is not None and o.status == "rejected":
        extra.append("your edit was not sent: Keep planning sends only the feedback")
    said = o.said if o.said is not None else o.feedback  # a plan: as typed, not as sent
    if said and o.status in ("rejected", "denied"):
        extra.append(f"your feedback: {summarize(said, MAX_SAID)}")
    header = (o.headers or {}).get  # a question by its header ("Color"), as its card names it
    if o.answers:
        extra.append("; ".join(f"{summarize(header(k, k), 60)} = {summarize(v, 80)}"
                               for k, v in o.answers.items()))
    if o.notes:
        extra.append("; ".join(f"note on {summarize(header(k, k), 60)}: {summarize(v, 80)}"
                               for k, v in o.notes.items()))
    return text, extra


_STATUS = {
    "pending": "waiting",
    "approved": "Approved",
    "rejected": "Sent back (keep planning)",
    "expired": "Expired",
    "cancelled": "Cancelled",
    "answered": "Answered",
    "allowed": "Allowed",
    "always": "Allowed, with updates",
    "denied": "Denied",
}
_BY = {"restart": "the kernel restarted before an answer; it can no longer be answered",
       "timeout": "no answer in time", "interrupt": "interrupted", "close": "session closed",
       "cli": "withdrawn by the CLI", "rule": "by an unattended rule",
       "unattended": "no one could click and no rule decided"}


def decision_status(d: Any) -> str:
    """A decision's outcome in words (plain text)."""
    text = _STATUS.get(d.status, d.status)
    if d.status != "pending" and d.by in _BY:
        text += f": {_BY[d.by]}"
    if d.status == "approved" and d.mode_after:
        text += f" (then mode {d.mode_after}" + (
            f", for this plan only, then {d.back_to})" if getattr(d, "back_to", None) else ")")
    if d.status == "approved" and getattr(d, "edited", False):
        text += ", edited by you"
    if d.superseded and d.status != "approved":
        text += " · superseded by a later plan"
    return text
