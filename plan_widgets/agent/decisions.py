"""Decisions the agent waits for: a plan to approve, questions to answer, a tool to allow.

Each decision wraps one pending ``can_use_tool`` callback. It resolves exactly once, by the
user (a card's button or code), by a timeout, by an interrupt, or by the session closing.
Only an explicit user action can approve; every other ending denies.

What differs between the kinds lives in the kind's class, in one place: the event that logs
the question (:meth:`Decision.asked_event`) and the one that logs its outcome
(:meth:`Decision.decided_event`), and the answer the CLI gets (:meth:`Decision.cli_answer`).
:data:`KINDS` maps a kind's name to its class.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Literal

from .. import model as ev
from ..model.events import Actor, DecisionKind
from ..model.options import RESTING_MODES
from .ondisk import OnDisk
from .outcome import Outcome, granted
from .plan_edits import PlanEdits
from .seam import Allow, Answer, Deny

log = logging.getLogger("plan_widgets")
Decider = Literal["user", "code", "rule"]
"""Who may grant: a click on a card, the notebook's own code, or an unattended rule (which
names itself in the outcome's ``rule``: agent/rules.py)."""

KEEP_PLANNING_DEFAULT = ("The user wants you to keep planning. Revise the plan, then present "
                         "it again with ExitPlanMode.")


class Decision:
    """A decision the agent is waiting for. Resolve it once; later calls change nothing."""

    kind: ClassVar[DecisionKind] = "tool"
    unanswered: ClassVar[str] = "the request was not granted."
    """What the model is told when no answer came (after "No answer; ")."""

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
        self.agent_id: str | None = None  # the subagent that asks (its task id), or None
        self.agent: str | None = None  # that subagent's description, as its card names it
        self.ruling: str | None = None
        """While an unattended rule or a Python decider decides: its name (agent/rules.py)."""

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
                log.exception("a decision watcher failed")

    def _resolve(self, outcome: Outcome) -> bool:
        if outcome.granted and outcome.by not in ("user", "code", "rule"):
            raise ValueError(f"by={outcome.by!r}: only the user, code or a rule can decide")
        if self.outcome is not None:
            return False
        if self.ruling is not None and outcome.rule is None and outcome.by in ("code", "rule"):
            outcome = replace(outcome, by="rule", rule=self.ruling)  # a decider's call
        if outcome.by == "rule" and not outcome.rule:
            raise ValueError("by='rule': a rule's decision must name the rule")
        self.outcome = outcome
        if not self._future.done():
            self._future.set_result(outcome)
        for fn in self._listeners:
            try:
                fn(self)
            except Exception:  # a broken listener must not lose the decision
                log.exception("a decision listener failed")
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

    # -- what differs by kind --------------------------------------------------------------
    def asked_event(self) -> ev.Event:
        """The log event that records this decision being asked."""
        raise NotImplementedError

    def decided_event(self) -> ev.Event:
        """The log event that records how this decision ended."""
        raise NotImplementedError

    @classmethod
    def expired_event(cls, decision_id: str) -> ev.Event:
        """The log event for a decision that a dead kernel left pending (resume)."""
        raise NotImplementedError

    def granted_answer(self, outcome: Outcome) -> Answer:
        """The CLI's answer for a granted or refused outcome (not for expired/cancelled)."""
        raise NotImplementedError

    def cli_answer(self, approval_timeout: float) -> Answer:
        """The answer the CLI gets for this decision's outcome: only a user's or code's grant
        allows; a timeout, an interrupt or a close denies (and tells the model why)."""
        o = self.outcome
        assert o is not None
        if o.status not in ("expired", "cancelled"):
            return self.granted_answer(o)
        if o.status == "expired" and o.by == "timeout":
            return Deny(f"No answer came from the user within {approval_timeout:g} s; "
                        f"{self.unanswered} Stop and wait for the user.")
        if o.by == "unattended":
            return Deny(f"No one can answer in this unattended run; {self.unanswered}",
                        interrupt=True)
        if o.by in ("interrupt", "close", "cli", "restart"):
            return Deny(f"The user interrupted; {self.unanswered}", interrupt=True)
        return Deny(f"No answer; {self.unanswered}")

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else "pending"
        return f"<{type(self).__name__} {self.id} {state}>"


class PlanDecision(PlanEdits, Decision):
    """A plan proposed with ExitPlanMode, awaiting Approve or Keep planning."""

    kind: ClassVar[DecisionKind] = "plan"
    unanswered: ClassVar[str] = "the plan was NOT approved."

    def __init__(
        self, plan: str, plan_file: str | None, resting_mode: str, *,
        tool_use_id: str | None = None, tool_input: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(tool_use_id=tool_use_id)
        self.plan = plan
        """The plan as the agent proposed it."""
        self.plan_file = plan_file
        self.resting_mode = resting_mode
        self.superseded = False
        self.tool_input = dict(tool_input) if tool_input is not None else {"plan": plan}
        """ExitPlanMode's input as the CLI sent it (an edited plan goes back inside it)."""
        self.previous: PlanDecision | None = None
        """The plan this one revises (the one sent back with Keep planning), if any."""

    def supersede(self) -> None:
        """Mark this plan as replaced by a revised one."""
        if not self.superseded:
            self.superseded = True
            self._notify()

    def approve(self, mode: str | None = None, *, plan: str | None = None,
                by: Decider = "code", only: bool = False) -> bool:
        """Approve the plan; the session leaves plan mode into ``mode`` (default: resting).

        ``plan``: approve this edited text instead. The CLI rewrites the plan file with it and
        the model reads it as the approved plan ("edited by user"). An edit that changes
        nothing approves the plan as proposed; an empty one is refused (ValueError).
        ``only``: ``mode`` for this plan only: back to the resting mode once its work ends."""
        if mode is not None and mode not in RESTING_MODES:
            raise ValueError(f"unknown mode {mode!r}: choose one of {', '.join(RESTING_MODES)}")
        mode, edited = mode or self.resting_mode, self.edit_of(plan)
        back = self.resting_mode if only and mode != self.resting_mode else None
        return self._resolve(Outcome("approved", by, mode=mode, plan=edited, back_to=back))

    def reject(self, feedback: str = "", *, by: Decider = "code",
               unsent_edit: str | None = None) -> bool:
        """Keep planning: the model receives ``feedback`` and revises the plan.

        ``unsent_edit``: an edit of the plan the user had open. It is NOT sent (the agent
        revises its own plan from the feedback); the outcome keeps it so the card can say so.
        """
        text = self.feedback_for(feedback.strip()) or KEEP_PLANNING_DEFAULT
        return self._resolve(Outcome("rejected", by, feedback=text,
                                     plan=self.unsent(unsent_edit), said=feedback.strip()))

    def asked_event(self) -> ev.Event:
        return ev.PlanProposed(decision_id=self.id, plan=self.plan, plan_file=self.plan_file,
                               tool_use_id=self.tool_use_id)

    def decided_event(self) -> ev.Event:
        o = self.outcome
        assert o is not None
        return ev.PlanDecided(decision_id=self.id, outcome=o.status,  # type: ignore[arg-type]
                              feedback=o.feedback, by=o.by, rule=o.rule,
                              mode_after=o.mode if o.status == "approved" else None,
                              edited=self.edited, approved_plan=o.plan if self.edited else None,
                              back_to=o.back_to)

    @classmethod
    def expired_event(cls, decision_id: str) -> ev.Event:
        return ev.PlanDecided(decision_id=decision_id, outcome="expired", by="restart")

    def granted_answer(self, outcome: Outcome) -> Answer:
        if outcome.status == "approved" and outcome.by in ("user", "code", "rule"):
            if outcome.plan is not None:  # edited: the CLI writes it to the plan file
                return Allow(input={**self.tool_input, "plan": outcome.plan},
                             mode=outcome.mode or self.resting_mode)
            return Allow(mode=outcome.mode or self.resting_mode)
        return Deny(outcome.feedback or "")


class QuestionDecision(Decision):
    """Questions asked with AskUserQuestion."""

    kind: ClassVar[DecisionKind] = "question"
    unanswered: ClassVar[str] = "the questions were not answered."

    def __init__(self, questions: list[dict[str, Any]], *, tool_use_id: str | None = None,
                 tool_input: dict[str, Any] | None = None) -> None:
        super().__init__(tool_use_id=tool_use_id)
        self.questions = questions
        self.tool_input = dict(tool_input or {"questions": questions})
        """The tool's input as asked (the answer goes back inside it)."""

    def asked_event(self) -> ev.Event:
        return ev.QuestionAsked(decision_id=self.id, questions=self.questions,
                                tool_use_id=self.tool_use_id)

    def decided_event(self) -> ev.Event:
        o = self.outcome
        assert o is not None
        return ev.QuestionAnswered(decision_id=self.id, outcome=o.status,  # type: ignore[arg-type]
                                   answers=o.answers or {}, notes=o.notes or {}, by=o.by,
                                   rule=o.rule)

    @classmethod
    def expired_event(cls, decision_id: str) -> ev.Event:
        return ev.QuestionAnswered(decision_id=decision_id, outcome="expired", by="restart")

    def granted_answer(self, outcome: Outcome) -> Answer:
        answered: dict[str, Any] = {**self.tool_input, "answers": dict(outcome.answers or {})}
        if outcome.notes:
            answered["annotations"] = {q: {"notes": n} for q, n in outcome.notes.items()}
        return Allow(input=answered)

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
        headers = {str(q.get("question", "")): str(q["header"]) for q in self.questions
                   if q.get("header")}
        return self._resolve(Outcome("answered", by, answers=out, notes=noted or None,
                                     headers=headers or None))

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

    kind: ClassVar[DecisionKind] = "tool"

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
        """The CLI's suggested rules for "always allow" (plain dicts)."""
        self.title = title
        self.before: OnDisk | None = None
        """The file an edit tool would change, as the gate read it when the card opened
        (None: not an edit, or not read): the card shows the change against it."""

    @property
    def unanswered(self) -> str:  # type: ignore[override]
        return f"{self.tool} was not allowed."

    def asked_event(self) -> ev.Event:
        return ev.ToolRequested(decision_id=self.id, tool=self.tool, input=self.input,
                                suggestions=list(self.suggestions), tool_use_id=self.tool_use_id)

    def decided_event(self) -> ev.Event:
        o = self.outcome
        assert o is not None
        return ev.ToolDecided(decision_id=self.id, outcome=o.status,  # type: ignore[arg-type]
                              reason=o.feedback, by=o.by, rule=o.rule)

    @classmethod
    def expired_event(cls, decision_id: str) -> ev.Event:
        return ev.ToolDecided(decision_id=decision_id, outcome="expired", by="restart")

    def granted_answer(self, outcome: Outcome) -> Answer:
        if outcome.status in ("allowed", "always"):
            return Allow(always=outcome.status == "always", rules=outcome.applied)
        return Deny(outcome.feedback or "The user denied this tool call.")

    def allow(self, always: bool = False, *, only: Sequence[int] | None = None,
              by: Decider = "code") -> bool:
        """Allow this call, with all the CLI's suggested updates (``always``) or ``only`` some."""
        status, applied = granted(always, only, len(self.suggestions))
        return self._resolve(Outcome(status, by, applied=applied))

    def deny(self, reason: str = "", *, by: Decider = "code") -> bool:
        """Deny this call, telling the model ``reason``."""
        return self._resolve(Outcome("denied", by, feedback=reason.strip() or None))


KINDS: dict[str, type[Decision]] = {
    cls.kind: cls for cls in (PlanDecision, QuestionDecision, ToolDecision)
}
"""Each decision kind's class, by its name."""


class DecisionList:
    """The decisions of one session, oldest first; the one place that ends open ones."""

    def __init__(self) -> None:
        self.all: list[Decision] = []

    def add(self, decision: Decision) -> None:
        """Record a new decision; a new plan supersedes the earlier ones not approved (an
        approved plan was carried out: a later plan is a new one, not its revision, and its
        finished turn is not re-rendered, which in a collaborator's page would move it:
        docs/cli.md#collaboration)."""
        if isinstance(decision, PlanDecision):
            plans = [d for d in self.all if isinstance(d, PlanDecision)]
            for old in plans:
                if old.outcome is None or not old.outcome.granted:
                    old.supersede()
            last = plans[-1] if plans else None
            if last is not None and last.outcome is not None and last.outcome.status == "rejected":
                decision.previous = last  # a revision after Keep planning: show what changed
        self.all.append(decision)

    def open(self) -> list[Decision]:
        """The decisions still waiting, oldest first."""
        return [d for d in self.all if not d.done]

    @property
    def pending(self) -> Decision | None:
        """The oldest decision still waiting, or None."""
        return next((d for d in self.all if not d.done), None)

    def end_open(self, by: Actor, *, expire: bool = False, only: Decision | None = None) -> int:
        """End every open decision (or only ``only``) unanswered: cancelled, or expired
        (``expire``: its callback is gone). Never approves. Returns how many ended."""
        ended = 0
        for d in self.open():
            if only is None or d is only:
                ended += d.expire(by) if expire else d.cancel(by)
        return ended
