"""The plan decision at a terminal prompt (terminal IPython, issue 22): approve, approve with
auto-accept edits, approve and start fresh, comment on a line, keep planning.

A comment is a form typed line by line: the line (its number or its text), then the comment.
A comment that cannot be taken (empty, too long, a line not in the plan) is one line, nothing
is kept, and the plan prompt comes back; so does a comment taken, until the user decides.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..agent.comments import CommentError
from ..agent.decisions import PlanDecision
from . import prompts

PLAN_CHOICES = (
    *prompts.PLAN_CHOICES[:2],
    prompts.Choice("f", "approve and start fresh", ("fresh", "start fresh")),
    prompts.Choice("c", "comment on a line", ("comment",)),
    prompts.PLAN_CHOICES[2],
)
PLAN_PROMPT = ("[a]pprove / approve + auto-[e]dits / approve, start [f]resh / [c]omment on a "
               "line / [k]eep planning: ")

Ask = Callable[[str], Awaitable[str]]
Pick = Callable[[str, tuple[prompts.Choice, ...]], Awaitable[prompts.Choice]]


async def ask_plan(d: PlanDecision, ask: Ask, pick: Pick, say: Callable[[str, str], None]) -> None:
    """Ask until the plan is decided (``say(text, style)`` prints one line)."""
    while not d.done:
        c = await pick(PLAN_PROMPT, PLAN_CHOICES)
        if c.key == "a":
            d.approve(by="user")
        elif c.key == "e":
            d.approve("acceptEdits", by="user")
        elif c.key == "f":
            d.approve_fresh(by="user")
        elif c.key == "c":
            where = await ask("line (its number or its text): ")
            note = await ask("comment: ")
            try:
                added = d.comment(int(where) if where.isdigit() else where, note)
            except CommentError as e:
                say(str(e)[:1].upper() + str(e)[1:], "yellow")
                continue
            say(f"comment added on line {added.line}: {added.quote}", "green")
        else:
            d.reject(await ask("feedback (optional): "), by="user")


def revision_lines(d: PlanDecision) -> list[str]:
    """A revision's comments on the plan before it, each with whether it changed that line."""
    out = []
    for c, hit in d.previous_comments():
        out.append(f"  your comment on line {c.line} ({'changed' if hit else 'not changed'} by "
                   f"this revision): {c.note}")
    return ["Your comments on the previous plan:", *out] if out else []
