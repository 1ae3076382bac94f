"""The state folded from a session's events: :class:`SessionState`, :func:`fold`, :func:`apply`.

The state is a pure fold of the log, so a restarted kernel that re-reads the log shows exactly
what happened, and every prefix of a log folds to the state as it stood then (tested with
hypothesis in ``tests/test_fold_properties.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from .events import (
    MAX_ERRORS,
    DecisionKind,
    ErrorEvent,
    Event,
    FilesRewound,
    ModelSwitched,
    PlanDecided,
    PlanMode,
    PlanProposed,
    QuestionAnswered,
    QuestionAsked,
    SessionStarted,
    TasksUpdated,
    ToolDecided,
    ToolRequested,
    TurnEnded,
    TurnStarted,
    gc_paused,
)


class DecisionRecord(NamedTuple):
    """A plan, question or tool decision as the log tells it (immutable)."""

    id: str
    kind: DecisionKind
    status: str = "pending"
    """"pending", or the outcome (approved/rejected/answered/allowed/always/denied/expired/
    cancelled)."""
    ts_asked: float | None = None
    ts_decided: float | None = None
    turn: int = 0
    """The number of the turn it was asked in (0 before any turn)."""
    tool_use_id: str | None = None
    plan: str | None = None
    plan_file: str | None = None
    questions: tuple[dict[str, Any], ...] = ()
    tool: str | None = None
    input: Mapping[str, Any] | None = None
    suggestions: tuple[dict[str, Any], ...] = ()
    feedback: str | None = None
    answers: Mapping[str, str] | None = None
    notes: Mapping[str, str] | None = None
    reason: str | None = None
    mode_after: str | None = None
    by: str | None = None
    superseded: bool = False
    """A plan is superseded once a later plan is proposed."""
    proposed_plan: str | None = None
    """An edited plan: the text the agent proposed (``plan`` is then the approved text)."""
    edited: bool = False
    """The user edited the plan before approving it."""
    revises: str | None = None
    """The plan decision this plan revises: the plan before it, if that was sent back with
    Keep planning (derived from the log)."""

    @property
    def pending(self) -> bool:
        """Whether nobody has decided yet."""
        return self.status == "pending"


_EMPTY: Mapping[str, DecisionRecord] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SessionState:
    """What a session's log says, folded. Build with :func:`fold` / :func:`apply`."""

    session_id: str | None = None
    name: str | None = None
    cwd: str | None = None
    resting_mode: str | None = None
    mode: str | None = None
    """The last effective permission mode (None before the CLI confirmed any)."""
    requested_mode: str | None = None
    """A requested mode the CLI has not confirmed yet."""
    refused: str | None = None
    """Why the last mode request was refused (cleared by the next request)."""
    model: str | None = None
    plan_model: str | None = None
    turns: int = 0
    working: bool = False
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    decisions: Mapping[str, DecisionRecord] = field(default_factory=lambda: _EMPTY)
    """All decisions by id, oldest first (read-only)."""
    errors: tuple[str, ...] = ()
    """The last few errors, oldest first."""
    last_event_seq: int = 0
    started: float | None = None
    """When the session first started."""
    updated: float | None = None
    """The time of the last event."""
    pending_ids: tuple[str, ...] = ()
    approved_ids: tuple[str, ...] = ()
    cost_base: float = field(default=0.0, repr=False)
    """Cost of earlier CLI processes (``total_cost_usd`` restarts with each process)."""
    cost_run: float = field(default=0.0, repr=False)
    """The running total the current CLI process last reported."""
    latest_plan: str | None = field(default=None, repr=False)
    tasks: tuple[Mapping[str, Any], ...] = ()
    """The agent's task list as last updated (``tasks:updated``), in its order."""
    tasks_turn: int = 0
    """The turn that last updated :attr:`tasks`."""
    rewound: tuple[int, ...] = ()
    """The turns whose files were rewound (``files:rewound``), in order."""

    @property
    def plan_mode(self) -> bool:
        """Whether the effective mode is plan."""
        return self.mode == "plan"

    @property
    def pending(self) -> list[str]:
        """Ids of decisions still waiting, oldest first."""
        return list(self.pending_ids)

    @property
    def plans(self) -> list[DecisionRecord]:
        """Approved plan decisions, oldest first."""
        return [self.decisions[i] for i in self.approved_ids]

    def as_dict(self) -> dict[str, Any]:
        """A plain (JSON-friendly) copy of the state."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "decisions":
                value = {k: _decision_dict(d) for k, d in value.items()}
            elif isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            out[name] = value
        out["plan_mode"] = self.plan_mode
        return out


def _decision_dict(d: DecisionRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in zip(d._fields, d, strict=True):
        if isinstance(value, tuple):
            out[name] = [dict(v) for v in value]
        elif isinstance(value, Mapping):
            out[name] = dict(value)
        else:
            out[name] = value
    return out


_STATE_FIELDS = tuple(SessionState.__dataclass_fields__)
_SCALARS = tuple(
    f for f in _STATE_FIELDS if f not in ("decisions", "errors", "pending_ids", "approved_ids")
)


class Cost(NamedTuple):
    """The session's cost across CLI processes: each process reports its own running total
    (``ResultMessage.total_cost_usd``), which restarts at 0 with a new process."""

    base: float = 0.0
    """The total of earlier processes."""
    run: float = 0.0
    """The running total the current process last reported."""

    @property
    def total(self) -> float:
        return self.base + self.run

    def new_process(self) -> Cost:
        return Cost(self.base + self.run, 0.0)

    def reported(self, running_total: float | None) -> Cost:
        """After a turn's report. A NaN, an infinity or a negative number changes nothing:
        it would poison every later total (and JSON writes it as null, so a re-read log would
        disagree with the live state). A total below the last one means a new process."""
        if running_total is None or not math.isfinite(running_total) or running_total < 0:
            return self
        base = self.base + self.run if running_total < self.run else self.base
        return Cost(base, running_total)


class _Builder:
    """A mutable state used while folding; containers are copied on first write."""

    # the scalar fields of SessionState, copied in and out (see _SCALARS)
    session_id: str | None
    name: str | None
    cwd: str | None
    resting_mode: str | None
    mode: str | None
    requested_mode: str | None
    refused: str | None
    model: str | None
    plan_model: str | None
    turns: int
    working: bool
    cost_usd: float
    input_tokens: int
    output_tokens: int
    last_event_seq: int
    started: float | None
    updated: float | None
    cost_base: float
    cost_run: float
    latest_plan: str | None
    tasks: tuple[Mapping[str, Any], ...]
    tasks_turn: int
    rewound: tuple[int, ...]

    def __init__(self, state: SessionState, own: bool) -> None:
        for f in _SCALARS:
            setattr(self, f, getattr(state, f))
        self._state = state
        self._decisions: Any = state.decisions
        self._errors: Any = state.errors
        self._pending: Any = state.pending_ids
        self._approved: Any = state.approved_ids
        self._dirty: set[str] = set()
        if own:
            self.decs()
            self.errs()
            self.pend()
            self.appr()

    # copy-on-write accessors
    def decs(self) -> dict[str, DecisionRecord]:
        if "d" not in self._dirty:
            self._decisions = dict(self._decisions)
            self._dirty.add("d")
        return self._decisions

    def errs(self) -> list[str]:
        if "e" not in self._dirty:
            self._errors = list(self._errors)
            self._dirty.add("e")
        return self._errors

    def pend(self) -> list[str]:
        if "p" not in self._dirty:
            self._pending = list(self._pending)
            self._dirty.add("p")
        return self._pending

    def appr(self) -> list[str]:
        if "a" not in self._dirty:
            self._approved = list(self._approved)
            self._dirty.add("a")
        return self._approved

    def freeze(self) -> SessionState:
        s = self._state
        dirty = self._dirty
        errors = self._errors
        if "e" in dirty and len(errors) > MAX_ERRORS:
            del errors[:-MAX_ERRORS]
        return SessionState(
            **{f: getattr(self, f) for f in _SCALARS},
            decisions=MappingProxyType(self._decisions) if "d" in dirty else s.decisions,
            errors=tuple(errors) if "e" in dirty else s.errors,
            pending_ids=tuple(self._pending) if "p" in dirty else s.pending_ids,
            approved_ids=tuple(self._approved) if "a" in dirty else s.approved_ids,
        )

    # -- one event -------------------------------------------------------------------------
    def run(self, events: Iterable[Any]) -> None:
        get = _HANDLERS.get
        seq: int = self.last_event_seq
        last = None
        for e in events:
            handler = get(e.type)
            if handler is not None:
                handler(self, e)
            if e.seq > seq:
                seq = e.seq
            last = e
        self.last_event_seq = seq
        if last is not None:
            self.updated = last.ts

    def error(self, text: str) -> None:
        errors = self.errs()
        errors.append(text)
        if len(errors) > 4 * MAX_ERRORS:
            del errors[:-MAX_ERRORS]

    def ask(self, e: Any, decision: DecisionRecord) -> None:
        decs = self.decs()
        old = decs.get(decision.id)
        if old is not None and (not old.pending or old.kind != decision.kind):
            return  # a decision is asked and resolved once; an id names one decision
        decs[decision.id] = decision
        if old is None:
            self.pend().append(decision.id)

    def decide(self, e: Any, kind: DecisionKind, **changes: Any) -> None:
        decs = self.decs()
        old = decs.get(e.decision_id)
        if old is None:  # asked before the log began: still record the outcome
            old = DecisionRecord(id=e.decision_id, kind=kind)
        elif not old.pending or old.kind != kind:
            return  # resolved once, later endings change nothing; nor do another kind's
        else:
            self.pend().remove(e.decision_id)
        new = old._replace(status=e.outcome, ts_decided=e.ts, by=e.by, **changes)
        decs[e.decision_id] = new
        if kind == "plan" and e.outcome == "approved":
            self.appr().append(e.decision_id)


def _session_started(b: _Builder, e: SessionStarted) -> None:
    if e.resumed_from is None and b.session_id is not None:
        # a fresh session in an old log: start over (resume is the way to continue)
        fresh = _Builder(SessionState(), own=True)
        b.__dict__.update(fresh.__dict__)
    if b.started is None:
        b.started = e.ts
    b.session_id = e.session_id
    b.name = e.name
    b.cwd = e.cwd
    b.resting_mode = e.resting_mode
    if e.model is not None or e.resumed_from is None:
        b.model = e.model  # a resume that names no model keeps the one last reported
    b.plan_model = e.plan_model
    b.working = False
    b.cost_base, b.cost_run = Cost(b.cost_base, b.cost_run).new_process()
    b.cost_usd = b.cost_base


def _turn_started(b: _Builder, e: TurnStarted) -> None:
    b.turns += 1
    b.working = True


def _turn_ended(b: _Builder, e: TurnEnded) -> None:
    b.working = False
    b.input_tokens += e.input_tokens
    b.output_tokens += e.output_tokens
    cost = Cost(b.cost_base, b.cost_run).reported(e.cost_usd)
    b.cost_base, b.cost_run, b.cost_usd = cost.base, cost.run, cost.total
    if e.is_error:
        b.error(f"turn {e.turn} {e.result}" + (f": {e.message}" if e.message else ""))


def _plan_mode(b: _Builder, e: PlanMode) -> None:
    if e.state == "requested":
        b.requested_mode = e.mode
        b.refused = None
    elif e.state == "effective":
        b.mode = e.mode
        if b.requested_mode == e.mode:
            b.requested_mode = None
    else:
        b.requested_mode = None
        b.refused = e.detail or f"{e.mode} refused"


def _plan_proposed(b: _Builder, e: PlanProposed) -> None:
    known = b._decisions.get(e.decision_id)
    if known is not None and (not known.pending or known.kind != "plan"):
        return  # a repeat of a plan already decided (or a clashing id): supersedes nothing
    prev = b.latest_plan
    revises = known.revises if known is not None else None
    if prev is not None and prev != e.decision_id:
        decs = b.decs()
        old = decs.get(prev)
        if old is not None and not old.superseded:
            decs[prev] = old._replace(superseded=True)
        if old is not None and old.status == "rejected":
            revises = prev  # sent back with Keep planning: this is its revision
    b.latest_plan = e.decision_id
    b.ask(e, DecisionRecord(
        id=e.decision_id, kind="plan", ts_asked=e.ts, turn=b.turns, tool_use_id=e.tool_use_id,
        plan=e.plan, plan_file=e.plan_file, revises=revises,
    ))


def _plan_decided(b: _Builder, e: PlanDecided) -> None:
    changes: dict[str, Any] = {"feedback": e.feedback, "mode_after": e.mode_after}
    if e.outcome == "approved" and (e.edited or e.approved_plan is not None):
        changes["edited"] = True
        if e.approved_plan is not None:  # the plan in force is the text the user approved
            old = b._decisions.get(e.decision_id)
            changes["plan"] = e.approved_plan
            changes["proposed_plan"] = old.plan if old is not None else None
    b.decide(e, "plan", **changes)


def _model_switched(b: _Builder, e: ModelSwitched) -> None:
    b.model = e.to_model


def _question_asked(b: _Builder, e: QuestionAsked) -> None:
    b.ask(e, DecisionRecord(
        id=e.decision_id, kind="question", ts_asked=e.ts, turn=b.turns,
        tool_use_id=e.tool_use_id, questions=tuple(e.questions),
    ))


def _question_answered(b: _Builder, e: QuestionAnswered) -> None:
    b.decide(e, "question", answers=MappingProxyType(e.answers),
             notes=MappingProxyType(e.notes) if e.notes else None)


def _tool_requested(b: _Builder, e: ToolRequested) -> None:
    b.ask(e, DecisionRecord(
        id=e.decision_id, kind="tool", ts_asked=e.ts, turn=b.turns, tool_use_id=e.tool_use_id,
        tool=e.tool, input=MappingProxyType(e.input), suggestions=tuple(e.suggestions),
    ))


def _tool_decided(b: _Builder, e: ToolDecided) -> None:
    b.decide(e, "tool", reason=e.reason)


def _tasks_updated(b: _Builder, e: TasksUpdated) -> None:
    b.tasks = tuple(MappingProxyType(dict(t)) for t in e.tasks)
    b.tasks_turn = e.turn


def _files_rewound(b: _Builder, e: FilesRewound) -> None:
    b.rewound = (*b.rewound, e.turn)


def _error(b: _Builder, e: ErrorEvent) -> None:
    b.error(f"{e.kind}: {e.message}")


_HANDLERS: dict[str, Any] = {
    "session:started": _session_started,
    "turn:started": _turn_started,
    "turn:ended": _turn_ended,
    "plan:mode": _plan_mode,
    "plan:proposed": _plan_proposed,
    "plan:decided": _plan_decided,
    "model:switched": _model_switched,
    "question:asked": _question_asked,
    "question:answered": _question_answered,
    "tool:requested": _tool_requested,
    "tool:decided": _tool_decided,
    "tasks:updated": _tasks_updated,
    "files:rewound": _files_rewound,
    "error": _error,
}


def apply(state: SessionState, event: Event) -> SessionState:
    """Return the state after ``event``; ``state`` itself is left as it was."""
    b = _Builder(state, own=False)
    b.run((event,))
    return b.freeze()


def fold(events: Iterable[Event], state: SessionState | None = None) -> SessionState:
    """Fold ``events`` (oldest first) onto ``state`` (default: the empty state)."""
    b = _Builder(state if state is not None else SessionState(), own=True)
    with gc_paused():
        b.run(events)
    return b.freeze()
