"""What the terminal's decision prompts accept, and what they say when an answer is not a choice.

Pure functions, no I/O: the text view asks, these read the answer. An answer that is not one
of the choices (an empty line, ``y`` at the plan prompt, a typo) is never taken as a choice:
``choose`` returns ``None`` (or ``read_question_answer`` raises ``NotAChoice``) and the view asks
again, naming the choices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    """One answer to a prompt: its key (``a``), what it does, and whole words that mean it."""

    key: str
    label: str
    words: tuple[str, ...] = ()

    def matches(self, answer: str) -> bool:
        a = " ".join(answer.split()).lower()
        return a == self.key or a in self.words


PLAN_CHOICES = (
    Choice("a", "approve", ("approve",)),
    Choice("e", "approve and auto-accept edits", ("edits", "approve edits")),
    Choice("k", "keep planning", ("keep", "keep planning")),
)
PLAN_PROMPT = "[a]pprove / approve + auto-[e]dits / [k]eep planning: "

TOOL_ALLOW = Choice("y", "allow it once", ("yes", "allow"))
TOOL_ALWAYS = Choice("a", "allow it, and also each update listed above (as the card's ticked "
                     "boxes)", ("also", "always"))
TOOL_DENY = Choice("n", "deny it", ("no", "deny"))


def tool_choices(always: bool) -> tuple[Choice, ...]:
    """The tool prompt's choices; *always* only when the CLI suggested a rule."""
    return (TOOL_ALLOW, TOOL_ALWAYS, TOOL_DENY) if always else (TOOL_ALLOW, TOOL_DENY)


def tool_prompt(always: bool) -> str:
    return "[y]es, once / [a]lso the above / [n]o: " if always else "[y]es / [n]o: "


def choose(answer: str, choices: Sequence[Choice]) -> Choice | None:
    """The choice ``answer`` names (its key or one of its words, any case), else ``None``."""
    for c in choices:
        if c.matches(answer):
            return c
    return None


def _shown(answer: str, limit: int = 40) -> str:
    a = " ".join(answer.split())
    return repr(a if len(a) <= limit else a[: limit - 1] + "…")


def not_a_choice(answer: str, choices: Sequence[Choice]) -> str:
    """One line: the answer was not a choice, and what the choices are."""
    what = "Nothing was chosen" if not answer.strip() else f"{_shown(answer)} is not a choice"
    named = [f"{c.key} to {c.label}" for c in choices]
    listed = ", ".join(named[:-1]) + f", or {named[-1]}" if len(named) > 1 else named[0]
    return f"{what}: type {listed}."


class NotAChoice(ValueError):
    """An answer to a question that cannot be taken; its message says what can."""


def question_prompt(n_options: int, multi: bool) -> str:
    if n_options == 0:
        return "your answer: "
    span = "1" if n_options == 1 else f"1-{n_options}"
    if multi:
        return f"choices ({span}, several with commas, or your own words): "
    return f"choice ({span}, or your own words): "


def read_question_answer(answer: str, labels: Sequence[str], multi: bool) -> list[str]:
    """The labels (or own words) that ``answer`` picks for one question.

    A number picks that option, an option's label picks it too (any case), any other text is
    the user's own answer. A multi-select question takes several, separated by commas; a
    single-choice question takes exactly one (own words may contain commas). Raises
    ``NotAChoice`` for an empty answer, a number that is no option, or several numbers where
    one is asked.
    """
    n = len(labels)
    hint = (f"a number from 1 to {n}" if n > 1 else "1" if n == 1 else "")
    hint = (hint + (", several separated by commas," if multi else "") + " or your own words"
            if hint else "your own words")
    text = " ".join(answer.split())
    if not text:
        raise NotAChoice(f"Nothing was chosen: type {hint}.")
    parts = [p.strip() for p in text.split(",")] if multi else [text]
    if not multi and len(text.split(",")) > 1 and all(
        p.strip().isdigit() for p in text.split(",")
    ):
        raise NotAChoice(f"{_shown(text)}: this question takes one choice; type {hint}.")
    picks: list[str] = []
    for part in parts:
        if not part:
            continue
        if part.isdigit():
            i = int(part)
            if not 0 < i <= n:
                raise NotAChoice(f"{part} is not one of the options: type {hint}.")
            label = labels[i - 1]
        else:
            label = next((lb for lb in labels if lb.lower() == part.lower()), part)
        if label not in picks:
            picks.append(label)
    if not picks:
        raise NotAChoice(f"Nothing was chosen: type {hint}.")
    return picks
