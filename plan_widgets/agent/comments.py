"""Comments on a plan's lines, as on a code review (issue 22, point 2).

A comment belongs to one line of the plan as proposed: a line, or a heading (then it is about
that heading's section). Keep planning sends the model every comment with the line it quotes,
then the general feedback, as one tool result (the CLI passes a ``Deny`` message to the
model verbatim, as an error tool_result: docs/cli.md#plan-mode). The revised plan's Changes
view shows each comment beside its line, and whether the revision changed that line
(:func:`touched`, by difflib over the two versions' lines).

Bad input is refused whole, in one line, before anything is kept or sent: an empty note, a
note longer than :data:`MAX_NOTE` characters, a line that is not in the plan (a stale anchor:
the plan changed under it), a comment on a plan already decided.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

MAX_NOTE = 4000
"""Characters one comment may hold: a comment is about a line; longer text belongs in the
general feedback (which has no limit of ours). 4,000 characters is about a page."""
MAX_COMMENTS = 50
"""Comments one plan may hold (each is sent with its quoted line)."""


class CommentError(ValueError):
    """A comment that cannot be taken; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class PlanComment:
    """One comment: the plan's line it is about (1-based), that line's text, the note."""

    line: int
    quote: str
    note: str
    section: bool = False
    """The line is a heading: the comment is about its section."""

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "quote": self.quote, "note": self.note,
                "section": self.section}

    @classmethod
    def from_dict(cls, data: Any) -> PlanComment | None:
        """A comment read back from the log (None if the entry is not one)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(int(data["line"]), str(data["quote"]), str(data["note"]),
                       bool(data.get("section", False)))
        except (KeyError, TypeError, ValueError):
            return None


def plan_lines(plan: str) -> list[str]:
    """The plan's lines, as comments number them (1-based in what users see)."""
    return plan.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def find_line(plan: str, where: int | str) -> int:
    """The 1-based number of the plan's line that ``where`` names: its number, its text (as
    it stands, surrounding spaces aside), or a part of exactly one line."""
    lines = plan_lines(plan)
    if isinstance(where, bool) or not isinstance(where, int | str):
        raise CommentError("name the line by its number or its text")
    if isinstance(where, int):
        if 1 <= where <= len(lines) and lines[where - 1].strip():
            return where
        raise CommentError(f"the plan has no line {where} with text (it has {len(lines)} "
                           "lines): name a line that is in the plan")
    want = where.strip()
    if not want:
        raise CommentError("name the line the comment is about (its number or its text)")
    exact = [i for i, ln in enumerate(lines, 1) if ln.strip() == want]
    if exact:
        return exact[0]
    part = [i for i, ln in enumerate(lines, 1) if want in ln]
    if len(part) == 1:
        return part[0]
    if part:
        raise CommentError(f"{len(part)} lines of the plan contain {_short(want)!r}: quote "
                           "more of the line, or give its number")
    raise CommentError(f"no line of the plan reads {_short(want)!r} (the plan may have "
                       "changed): comment on a line that is in the plan")


def make_comment(plan: str, where: int | str, note: Any, count: int = 0) -> PlanComment:
    """A checked comment on ``plan`` (raises :class:`CommentError`, one line, if it is not)."""
    if not isinstance(note, str) or not note.strip():
        raise CommentError("the comment is empty: write what should change on that line")
    text = note.strip()
    if len(text) > MAX_NOTE:
        raise CommentError(f"the comment is {len(text):,} characters long; a comment holds "
                           f"at most {MAX_NOTE:,}: shorten it, or put the long text in the "
                           "general feedback")
    if count >= MAX_COMMENTS:
        raise CommentError(f"this plan already has {MAX_COMMENTS} comments: put the rest in "
                           "the general feedback")
    n = find_line(plan, where)
    quote = plan_lines(plan)[n - 1].strip()
    return PlanComment(n, quote, text, section=quote.startswith("#"))


def feedback_with(comments: list[PlanComment], feedback: str) -> str:
    """What Keep planning sends: each comment with the line it quotes, then the feedback.

    A line is named by its text, not its number: the person saw the plan rendered, with no
    line numbers, and the number (the Markdown source's) was one they never saw (issue 42,
    point 9)."""
    if not comments:
        return feedback
    parts = ["The user commented on lines of your plan:"]
    for c in sorted(comments, key=lambda c: c.line):
        where = f"the section {c.quote!r}" if c.section else "the line"
        parts.append(f'- On {where}:\n  > {c.quote}\n  Comment: {c.note}')
    if feedback.strip():
        parts.append(f"General feedback: {feedback.strip()}")
    parts.append("Revise the plan to address every comment, then present it again with "
                 "ExitPlanMode.")
    return "\n\n".join(parts)


def touched(old_plan: str, new_plan: str, comments: list[PlanComment]) -> dict[int, bool]:
    """For each comment (by its line in ``old_plan``): whether the revision changed that line
    (or, for a section, any line of the section)."""
    old, new = plan_lines(old_plan), plan_lines(new_plan)
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "insert":  # new lines after line i1: that line's neighbourhood changed
            changed.add(i1)
        elif tag != "equal":
            changed.update(range(i1 + 1, i2 + 1))
    out: dict[int, bool] = {}
    for c in comments:
        end = c.line
        if c.section:
            level = len(c.quote) - len(c.quote.lstrip("#"))
            end = next((i for i in range(c.line + 1, len(old) + 1)
                        if old[i - 1].startswith("#")
                        and len(old[i - 1]) - len(old[i - 1].lstrip("#")) <= level),
                       len(old) + 1) - 1
        out[c.line] = any(i in changed for i in range(c.line, end + 1))
    return out


def new_line_of(old_plan: str, new_plan: str, line: int) -> int | None:
    """Where ``old_plan``'s line ``line`` stands in ``new_plan`` (None: it was changed)."""
    matcher = difflib.SequenceMatcher(a=plan_lines(old_plan), b=plan_lines(new_plan),
                                      autojunk=False)
    for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal" and i1 < line <= i2:
            return j1 + (line - i1)
    return None
