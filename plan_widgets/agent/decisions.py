"""Decisions the agent waits for: a plan to approve, questions to answer, a tool to allow.

Each decision wraps one pending ``can_use_tool`` callback. It resolves exactly once, by the
user (a card's button or code), by a timeout, by an interrupt, or by the session closing.
Only an explicit user action can approve; every other ending denies.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model.options import RESTING_MODES

DecisionKind = Literal["plan", "question", "tool"]
Actor = Literal["user", "code", "timeout", "interrupt", "close", "cli", "gate", "restart"]
Decider = Literal["user", "code"]
"""Who may grant: a click on a card, or the notebook's own code."""

KEEP_PLANNING_DEFAULT = (
    "The user wants you to keep planning. Revise the plan, then present it again with "
    "ExitPlanMode."
)


@dataclass(frozen=True)
class Outcome:
    """How a decision ended."""

    status: str
    """plan: approved/rejected; question: answered; tool: allowed/always/denied;
    any kind: expired/cancelled."""
    by: Actor
    mode: str | None = None
    feedback: str | None = None
    answers: dict[str, str] | None = None
    notes: dict[str, str] | None = None
    """Questions: the user's optional notes, keyed by question text."""
    at: float = field(default_factory=time.time)

    @property
    def granted(self) -> bool:
        """Whether the agent may go ahead (only ever true for an explicit user action)."""
        return self.status in ("approved", "answered", "allowed", "always")


class Decision:
    """A decision the agent is waiting for. Resolve it once; later calls change nothing."""

    kind: DecisionKind = "tool"

    def __init__(self, *, tool_use_id: str | None = None) -> None:
        self.id: str = uuid.uuid4().hex[:12]
        self.tool_use_id = tool_use_id
        self.asked_at = time.time()
        self.expires_at: float | None = None
        """When an unanswered decision expires (set once something waits for it)."""
        self.outcome: Outcome | None = None
        self._future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._listeners: list[Callable[[Decision], None]] = []
        self._watchers: list[Callable[[], None]] = []

    # -- state ---------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """True once the decision has been made (by anyone)."""
        return self.outcome is not None

    def on_resolved(self, fn: Callable[[Decision], None]) -> None:
        """Call ``fn(decision)`` once it resolves (at once if it already has)."""
        if self.outcome is not None:
            fn(self)
        else:
            self._listeners.append(fn)

    def watch(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` whenever the decision's display should change."""
        self._watchers.append(fn)

    def _notify(self) -> None:
        for fn in list(self._watchers):
            try:
                fn()
            except Exception:
                pass

    def _resolve(self, outcome: Outcome) -> bool:
        if outcome.granted and outcome.by not in ("user", "code"):
            raise ValueError(f"by={outcome.by!r}: only the user or code can decide")
        if self.outcome is not None:
            return False
        self.outcome = outcome
        if not self._future.done():
            self._future.set_result(outcome)
        for fn in self._listeners:
            try:
                fn(self)
            except Exception:  # a broken listener must not lose the decision
                pass
        self._listeners.clear()
        self._notify()
        return True

    async def wait(self, timeout: float | None) -> Outcome:
        """Wait for the outcome; on timeout the decision expires (never approves)."""
        if timeout is not None and self.outcome is None:
            self.expires_at = time.time() + timeout
            self._notify()
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            self.expire("timeout")
            assert self.outcome is not None
            return self.outcome

    def expire(self, by: Actor = "timeout") -> bool:
        """End the decision unanswered: it denies."""
        return self._resolve(Outcome("expired", by))

    def cancel(self, by: Actor = "interrupt") -> bool:
        """Cancel the decision (interrupt, close, or the CLI withdrew it): it denies."""
        return self._resolve(Outcome("cancelled", by))

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else "pending"
        return f"<{type(self).__name__} {self.id} {state}>"


class PlanDecision(Decision):
    """A plan proposed with ExitPlanMode, awaiting Approve or Keep planning."""

    kind: DecisionKind = "plan"

    def __init__(
        self, plan: str, plan_file: str | None, resting_mode: str, *, tool_use_id: str | None = None
    ) -> None:
        super().__init__(tool_use_id=tool_use_id)
        self.plan = plan
        self.plan_file = plan_file
        self.resting_mode = resting_mode
        self.superseded = False

    def supersede(self) -> None:
        """Mark this plan as replaced by a revised one."""
        if not self.superseded:
            self.superseded = True
            self._notify()

    def approve(self, mode: str | None = None, *, by: Decider = "code") -> bool:
        """Approve the plan; the session leaves plan mode into ``mode`` (default: resting)."""
        if mode is not None and mode not in RESTING_MODES:
            raise ValueError(f"unknown mode {mode!r}: choose one of {', '.join(RESTING_MODES)}")
        return self._resolve(Outcome("approved", by, mode=mode or self.resting_mode))

    def reject(self, feedback: str = "", *, by: Decider = "code") -> bool:
        """Keep planning: the model receives ``feedback`` and revises the plan."""
        text = feedback.strip() or KEEP_PLANNING_DEFAULT
        return self._resolve(Outcome("rejected", by, feedback=text))


class QuestionDecision(Decision):
    """Questions asked with AskUserQuestion."""

    kind: DecisionKind = "question"

    def __init__(self, questions: list[dict[str, Any]], *, tool_use_id: str | None = None) -> None:
        super().__init__(tool_use_id=tool_use_id)
        self.questions = questions

    def answer(
        self,
        answers: dict[str, str | list[str]] | None = None,
        *,
        notes: dict[str, str] | None = None,
        by: Decider = "code",
        **kw: Any,
    ) -> bool:
        """Answer: ``{question text (or header): label or [labels] or free text}``.

        ``notes`` adds an optional note to a question (keyed the same way); the model reads it
        with the answer. A question left out stays unanswered.
        """
        given = dict(answers or {})
        given.update(kw)
        out: dict[str, str] = {}
        for key, val in given.items():
            if val is None:
                continue
            joined = ", ".join(map(str, val)) if isinstance(val, list | tuple) else str(val)
            if joined.strip():
                out[self._question_text(key)] = joined
        noted = {self._question_text(k): str(v).strip() for k, v in (notes or {}).items()
                 if v is not None and str(v).strip()}
        return self._resolve(Outcome("answered", by, answers=out, notes=noted or None))

    def _question_text(self, key: str) -> str:
        """The question that ``key`` names (its text or its header)."""
        for q in self.questions:
            if key == str(q.get("question", "")):
                return key
        for q in self.questions:
            if q.get("header") and key == str(q.get("header")):
                return str(q.get("question", ""))
        raise ValueError(f"no such question: {key!r}")


class ToolDecision(Decision):
    """A tool call that the resting permission mode asks about."""

    kind: DecisionKind = "tool"

    def __init__(
        self,
        tool: str,
        input: dict[str, Any],
        suggestions: list[Any],
        *,
        tool_use_id: str | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(tool_use_id=tool_use_id)
        self.tool = tool
        self.input = input
        self.suggestions = suggestions
        self.title = title

    def allow(self, always: bool = False, *, by: Decider = "code") -> bool:
        """Allow this call; ``always=True`` also applies the CLI's suggested rules."""
        if always and not self.suggestions:
            always = False
        return self._resolve(Outcome("always" if always else "allowed", by))

    def deny(self, reason: str = "", *, by: Decider = "code") -> bool:
        """Deny this call, telling the model ``reason``."""
        return self._resolve(Outcome("denied", by, feedback=reason.strip() or None))
