"""Rules that decide what no one can click, and the session's unattended referee.

A run with no one to click (papermill, nbconvert, a pipe into IPython: ipython/unattended.py)
decides each decision by a rule, or fails naming it; silence never approves. Rules are one
string of ``;``-separated clauses (docs/unattended.md)::

    plans=approve:acceptEdits; tools=allow:Read,Glob,Bash(ls *); tools=deny:Bash(rm *);
    questions=first

- ``plans=approve[:MODE]`` approves every plan into MODE (default: the session's resting
  mode); ``plans=reject`` sends it back (keep planning).
- ``tools=allow:PATTERNS`` / ``tools=deny:PATTERNS``: a pattern is a tool name (``fnmatch``:
  ``mcp__*``) or ``Name(glob)`` over the call's command, path or URL; a deny wins.
- ``questions=first`` answers each question with its first option, ``questions=none`` leaves
  them unanswered (the model gets no answers), ``questions=option:LABEL`` picks the option
  LABEL.

A Python decider (``Referee.decider``, set with ``session.decide_with(fn)``: ipython layer) is
called first, attended or not: it decides by calling the decision's own methods, and its
decisions name it (``decider:fn``). Every decision made here is logged with ``by="rule"``
and the rule's text (``rule``), which the card's static form shows.
"""

from __future__ import annotations

import fnmatch
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..model.options import RESTING_MODES
from .decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from .tasks import spawn

log = logging.getLogger("plan_widgets")
_TARGET_KEYS = ("command", "file_path", "notebook_path", "path", "url", "pattern")


class RuleError(ValueError):
    """A malformed rule: its message is one line naming the setting and the way out."""


@dataclass(frozen=True)
class Rules:
    """Parsed rules; ``source`` names the setting they came from (for error lines)."""

    source: str = ""
    plans: tuple[str, str | None, str] | None = None  # (verb, mode, clause)
    allow: tuple[tuple[str, str], ...] = ()  # (pattern, clause)
    deny: tuple[tuple[str, str], ...] = ()
    questions: tuple[str, str | None, str] | None = None  # (how, label, clause)
    text: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str, source: str) -> Rules:
        """Parse ``text``; a mistake raises :class:`RuleError` naming ``source``."""
        plans = questions = None
        allow: list[tuple[str, str]] = []
        deny: list[tuple[str, str]] = []
        for clause in (c.strip() for c in text.split(";")):
            if not clause:
                continue
            key, eq, value = clause.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or not value:
                raise RuleError(f"{source}: `{clause}` is not KEY=VALUE (plans=, tools=, "
                                "questions=; docs/unattended.md)")
            if key == "plans":
                plans = _plans(value, clause, source)
            elif key == "tools":
                verb, _, pats = value.partition(":")
                if verb not in ("allow", "deny") or not pats.strip():
                    raise RuleError(f"{source}: `{clause}`: write tools=allow:PATTERNS or "
                                    "tools=deny:PATTERNS")
                (allow if verb == "allow" else deny).extend(
                    (_pattern(p, clause, source), clause) for p in _split(pats))
            elif key == "questions":
                questions = _questions(value, clause, source)
            else:
                raise RuleError(f"{source}: unknown rule `{key}` in `{clause}` (use plans=, "
                                "tools= or questions=)")
        return cls(source, plans, tuple(allow), tuple(deny), questions, text)

    def __bool__(self) -> bool:
        return bool(self.plans or self.allow or self.deny or self.questions)

    def decide(self, d: Decision) -> bool:
        """Decide ``d`` by these rules (by="rule", naming the clause); False: no rule fits.
        A rule that cannot apply (an option the question lacks) raises :class:`RuleError`."""
        if isinstance(d, PlanDecision) and self.plans is not None:
            verb, mode, clause = self.plans
            d.ruling = clause
            return d.approve(mode, by="rule") if verb == "approve" else d.reject(
                "Not approved by the unattended rule; revise the plan.", by="rule")
        if isinstance(d, QuestionDecision) and self.questions is not None:
            return self._answer(d)
        if isinstance(d, ToolDecision):
            target = next((str(d.input[k]) for k in _TARGET_KEYS if k in d.input), "")
            for pats, allowed in ((self.deny, False), (self.allow, True)):
                hit = next((c for p, c in pats if _matches(p, d.tool, target)), None)
                if hit is not None:
                    clause = d.ruling = hit
                    return d.allow(by="rule") if allowed else d.deny(
                        f"Denied by the unattended rule `{clause}`.", by="rule")
        return False

    def _answer(self, d: QuestionDecision) -> bool:
        assert self.questions is not None
        how, label, clause = self.questions
        d.ruling = clause
        answers: dict[str, str | list[str]] = {}
        for q in d.questions:
            labels = [str(o.get("label", "")) for o in q.get("options") or []
                      if isinstance(o, dict)]
            if how == "first" and labels:
                answers[str(q.get("question", ""))] = labels[0]
            elif how == "option":
                if label not in labels:
                    raise RuleError(f"{self.source}: `{clause}`: the question "
                                    f"\"{q.get('question', '')}\" has no option `{label}` "
                                    f"(its options: {', '.join(labels) or 'none'})")
                answers[str(q.get("question", ""))] = str(label)
        return d.answer(answers, by="rule")


def _split(text: str) -> list[str]:
    """Comma-separated patterns; a comma inside ``Name(...)`` stays in the pattern."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [p for p in out if p]


def _pattern(p: str, clause: str, source: str) -> str:
    name = p.split("(", 1)[0]
    if not name or (p.count("(") != p.count(")")) or ("(" in p and not p.endswith(")")):
        raise RuleError(f"{source}: `{clause}`: bad tool pattern `{p}` (write Name or "
                        "Name(glob), e.g. Bash(git *))")
    return p


def _matches(pattern: str, tool: str, target: str) -> bool:
    name, paren, arg = pattern.partition("(")
    if not fnmatch.fnmatchcase(tool, name):
        return False
    return not paren or fnmatch.fnmatchcase(target, arg[:-1])


def _plans(value: str, clause: str, source: str) -> tuple[str, str | None, str]:
    verb, _, mode = value.partition(":")
    if verb == "reject" and not mode:
        return ("reject", None, clause)
    if verb != "approve":
        raise RuleError(f"{source}: `{clause}`: write plans=approve, plans=approve:MODE or "
                        "plans=reject")
    if mode and mode not in RESTING_MODES:
        raise RuleError(f"{source}: `{clause}`: unknown mode `{mode}` (one of "
                        f"{', '.join(RESTING_MODES)})")
    return ("approve", mode or None, clause)


def _questions(value: str, clause: str, source: str) -> tuple[str, str | None, str]:
    how, _, label = value.partition(":")
    if how in ("first", "none") and not label:
        return (how, None, clause)
    if how == "option" and label.strip():
        return ("option", label.strip(), clause)
    raise RuleError(f"{source}: `{clause}`: write questions=first, questions=none or "
                    "questions=option:LABEL")


Presence = Callable[[], Awaitable[bool]]
"""Whether someone can click (a widget frontend, a terminal): ipython/unattended.py."""


class Referee:
    """A session's unattended referee: the decider, then the rules when no one can click.

    ``presence`` and ``rules`` are given by the layer that knows the kernel (None: someone
    can click, as outside IPython). A decision no rule decides is denied (``unattended``) and
    kept in ``failures`` as one line naming it and the setting that would decide it; the
    waiting cell raises it."""

    def __init__(self) -> None:
        self.decider: Callable[[Decision], Any] | None = None
        self.decider_unattended = False
        """The decider decides only when no one can click (a person's cards wait for them)."""
        self.presence: Presence | None = None
        self.rules: Callable[[], Rules] | None = None
        self.failures: list[str] = []

    def review(self, d: Decision) -> None:
        """A decision just opened (logged, its card shown): decide it if a decider or rule
        does. Runs on the loop; decisions are ruled in the order they opened."""
        spawn(self._review(d), name="plan_widgets unattended rule")

    async def _review(self, d: Decision) -> None:
        if self.decider is not None and (not self.decider_unattended or (
                self.presence is not None and not await self.presence())):
            name = getattr(self.decider, "__name__", type(self.decider).__name__)
            d.ruling = f"decider:{name}"
            try:
                result = self.decider(d)
                if inspect.isawaitable(result):
                    await result
            except Exception as e:
                log.exception("the Python decider %s failed", name)
                self._fail(d, f"the Python decider `{name}` failed: {type(e).__name__}: {e}")
                return
            finally:
                d.ruling = None
        if d.done or self.presence is None or await self.presence():
            return
        if d.done:
            return
        try:
            rules = self.rules() if self.rules is not None else Rules()
            if rules.decide(d):
                return
        except RuleError as e:
            self._fail(d, str(e))
            return
        finally:
            d.ruling = None
        self._fail(d, None)

    def _fail(self, d: Decision, why: str | None) -> None:
        self.failures.append(failure_line(d, why))
        log.warning("%s", self.failures[-1])
        d.cancel("unattended")

    def take_failures(self) -> list[str]:
        out, self.failures = self.failures, []
        return out


SETTING = ("PLAN_WIDGETS_RULES (or the papermill parameter plan_widgets_rules, or "
           "%config ClaudeMagics.rules)")


def failure_line(d: Decision, why: str | None) -> str:
    """One line: the decision no one could make, and the setting that would make it."""
    if isinstance(d, PlanDecision):
        title = next((ln.lstrip("# ").strip() for ln in d.plan.splitlines() if ln.strip()), "")
        what, rule = f'approve the plan "{_short(title)}"', "plans=approve:acceptEdits"
    elif isinstance(d, QuestionDecision):
        qs = "; ".join(f'"{_short(str(q.get("question", "")))}"' for q in d.questions)
        what, rule = f"answer the question {qs}", "questions=first"
    elif isinstance(d, ToolDecision):
        target = next((str(d.input[k]) for k in _TARGET_KEYS if k in d.input), "")
        what = f"allow {d.tool}" + (f" `{_short(target)}`" if target else "")
        rule = f"tools=allow:{d.tool}"
    else:
        what, rule = f"decide the {d.kind}", "plans=approve"
    if why is not None:
        return f"Unattended run: could not {what}: {why}."
    return (f"Unattended run: no one can {what}, and no rule decides it; it was denied and the "
            f"turn stopped. Set a rule such as `{rule}` in {SETTING}, or register a decider "
            "(session.decide_with); docs/unattended.md.")


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
