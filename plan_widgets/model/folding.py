"""Folding events into state: one handler per event type, :func:`fold` and :func:`apply`.

The state is a pure fold of the log, so a restarted kernel that re-reads the log shows exactly
what happened, and every prefix of a log folds to the state as it stood then (tested with
hypothesis in ``tests/test_fold_properties.py``). A new event class takes one handler in
:data:`FOLDS`, or a place in :data:`NOT_FOLDED`: :func:`check_folds` fails the import
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from . import events as _ev
from .events import (
    MAX_ERRORS,
    AgentEnded,
    AgentProgress,
    AgentStarted,
    DecisionKind,
    ErrorEvent,
    Event,
    EventBase,
    FilesRewound,
    ModelSwitched,
    PlanCommented,
    PlanDecided,
    PlanHandoff,
    PlanMode,
    PlanProposed,
    QuestionAnswered,
    QuestionAsked,
    SessionAsleep,
    SessionStarted,
    TasksUpdated,
    Thought,
    ToolDecided,
    ToolRequested,
    TurnEnded,
    TurnStarted,
    check_table,
    gc_paused,
)
from .state import AgentRecord, Cost, DecisionRecord, SessionState

_STATE_FIELDS = tuple(SessionState.__dataclass_fields__)
_SCALARS = tuple(
    f for f in _STATE_FIELDS if f not in ("decisions", "errors", "pending_ids", "approved_ids")
)



class _Builder:
    """A mutable state used while folding; containers are copied on first write."""

    # the scalar fields of SessionState, copied in and out (see _SCALARS)
    session_id: str | None
    name: str | None
    cwd: str | None
    resting_mode: str | None
    mode: str | None
    requested_mode: str | None
    back_to: str | None
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
    agents: tuple[AgentRecord, ...]
    fresh_from: str | None
    went_on_in: str | None
    last_compaction: Mapping[str, Any] | None
    mcp: Mapping[str, Mapping[str, Any]]

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
            self.writable_decisions()
            self.writable_errors()
            self.writable_pending_ids()
            self.writable_approved_ids()

    # copy-on-write: each container is copied on its first write, through its accessor
    def writable_decisions(self) -> dict[str, DecisionRecord]:
        if "decisions" not in self._dirty:
            self._decisions = dict(self._decisions)
            self._dirty.add("decisions")
        return self._decisions

    def writable_errors(self) -> list[str]:
        if "errors" not in self._dirty:
            self._errors = list(self._errors)
            self._dirty.add("errors")
        return self._errors

    def writable_pending_ids(self) -> list[str]:
        if "pending_ids" not in self._dirty:
            self._pending = list(self._pending)
            self._dirty.add("pending_ids")
        return self._pending

    def writable_approved_ids(self) -> list[str]:
        if "approved_ids" not in self._dirty:
            self._approved = list(self._approved)
            self._dirty.add("approved_ids")
        return self._approved

    def freeze(self) -> SessionState:
        s = self._state
        dirty = self._dirty
        errors = self._errors
        if "errors" in dirty and len(errors) > MAX_ERRORS:
            del errors[:-MAX_ERRORS]
        return SessionState(
            **{f: getattr(self, f) for f in _SCALARS},
            decisions=MappingProxyType(self._decisions) if "decisions" in dirty else s.decisions,
            errors=tuple(errors) if "errors" in dirty else s.errors,
            pending_ids=tuple(self._pending) if "pending_ids" in dirty else s.pending_ids,
            approved_ids=tuple(self._approved) if "approved_ids" in dirty else s.approved_ids,
        )

    # -- one event -------------------------------------------------------------------------
    def run(self, events: Iterable[Any]) -> None:
        get = FOLDS.get
        seq: int = self.last_event_seq
        last = None
        for e in events:
            handler = get(type(e))
            if handler is not None:
                handler(self, e)
            if e.seq > seq:
                seq = e.seq
            last = e
        self.last_event_seq = seq
        if last is not None:
            self.updated = last.ts

    def error(self, text: str) -> None:
        errors = self.writable_errors()
        errors.append(text)
        if len(errors) > 4 * MAX_ERRORS:
            del errors[:-MAX_ERRORS]

    def ask(self, e: Any, decision: DecisionRecord) -> None:
        decisions = self.writable_decisions()
        old = decisions.get(decision.id)
        if old is not None and (not old.pending or old.kind != decision.kind):
            return  # a decision is asked and resolved once; an id names one decision
        decisions[decision.id] = decision
        if old is None:
            self.writable_pending_ids().append(decision.id)

    def decide(self, e: Any, kind: DecisionKind, **changes: Any) -> None:
        decisions = self.writable_decisions()
        old = decisions.get(e.decision_id)
        if old is None:  # asked before the log began: still record the outcome
            old = DecisionRecord(id=e.decision_id, kind=kind)
        elif not old.pending or old.kind != kind:
            return  # resolved once, later endings change nothing; nor do another kind's
        else:
            self.writable_pending_ids().remove(e.decision_id)
        new = old._replace(status=e.outcome, ts_decided=e.ts, by=e.by, **changes)
        decisions[e.decision_id] = new
        if kind == "plan" and e.outcome == "approved":
            self.writable_approved_ids().append(e.decision_id)


def _session_started(b: _Builder, e: SessionStarted) -> None:
    if e.resumed_from is None and b.session_id is not None:
        # a fresh session in an old log: start over (resume is the way to continue)
        fresh = _Builder(SessionState(), own=True)
        b.__dict__.update(fresh.__dict__)
    if b.started is None:
        b.started = e.ts
    b.session_id = e.session_id
    b.name, b.cwd, b.resting_mode = e.name, e.cwd, e.resting_mode
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
    b.back_to = None if e.source in ("user", "plan_end") else b.back_to  # back; or user's pick
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
        decisions = b.writable_decisions()
        old = decisions.get(prev)
        if old is not None and not old.superseded:
            decisions[prev] = old._replace(superseded=True)
        if old is not None and old.status == "rejected":
            revises = prev  # sent back with Keep planning: this is its revision
    b.latest_plan = e.decision_id
    b.ask(e, DecisionRecord(
        id=e.decision_id, kind="plan", ts_asked=e.ts, turn=b.turns, tool_use_id=e.tool_use_id,
        plan=e.plan, plan_file=e.plan_file, revises=revises,
    ))


def _plan_decided(b: _Builder, e: PlanDecided) -> None:
    changes: dict[str, Any] = {"feedback": e.feedback, "mode_after": e.mode_after,
                               "back_to": e.back_to}
    b.back_to = e.back_to if e.outcome == "approved" else b.back_to  # a later approval wins
    if e.outcome == "approved" and (e.edited or e.approved_plan is not None):
        changes["edited"] = True
        if e.approved_plan is not None:  # the plan in force is the text the user approved
            old = b._decisions.get(e.decision_id)
            changes["plan"] = e.approved_plan
            changes["proposed_plan"] = old.plan if old is not None else None
    b.decide(e, "plan", **changes)


def _plan_handoff(b: _Builder, e: PlanHandoff) -> None:
    # The old log ends with it; the new one has it right after its session:started.
    if e.new_id == b.session_id:
        b.fresh_from = e.old_id
    elif e.old_id == b.session_id:
        b.went_on_in = e.new_id


def _plan_commented(b: _Builder, e: PlanCommented) -> None:
    old = b._decisions.get(e.decision_id)
    if old is None or old.kind != "plan":
        return
    c = {"line": e.line, "quote": e.quote, "note": e.note, "section": e.section}
    kept = tuple(x for x in old.comments if x != c) if e.removed else (*old.comments, c)
    b.writable_decisions()[e.decision_id] = old._replace(comments=kept)


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


def _agent_started(b: _Builder, e: AgentStarted) -> None:
    if any(a.id == e.agent_id for a in b.agents):
        return  # one id names one agent
    b.agents = (*b.agents, AgentRecord(
        id=e.agent_id, description=e.description, tool_use_id=e.tool_use_id,
        subagent_type=e.subagent_type, background=e.background, started=e.ts, turn=e.turn))


def _agent_changed(b: _Builder, agent_id: str, **changes: Any) -> None:
    b.agents = tuple(a._replace(**changes) if a.id == agent_id and a.running else a
                     for a in b.agents)


def _agent_progress(b: _Builder, e: AgentProgress) -> None:
    _agent_changed(b, e.agent_id, activity=e.activity, last_tool=e.last_tool, tokens=e.tokens,
                   tool_uses=e.tool_uses, duration_ms=e.duration_ms)


def _agent_ended(b: _Builder, e: AgentEnded) -> None:
    usage = {n: getattr(e, n) for n in ("tokens", "tool_uses", "duration_ms")
             if getattr(e, n) is not None}

    def end(a: AgentRecord) -> AgentRecord:
        if a.running:
            return a._replace(status=e.status, ended=e.ts, summary=e.summary, **usage)
        # the CLI says an ending twice (task_updated, then task_notification with the
        # summary): a later ending fills in what is missing, and changes nothing else
        return a._replace(summary=a.summary or e.summary, **usage)

    b.agents = tuple(end(a) if a.id == e.agent_id else a for a in b.agents)


def _error(b: _Builder, e: ErrorEvent) -> None:
    b.error(f"{e.kind}: {e.message}")


def _compacted(b: _Builder, e: _ev.Compacted) -> None:
    b.last_compaction = MappingProxyType(e.model_dump(exclude={"type", "seq"}))


def _mcp_changed(b: _Builder, e: _ev.McpChanged) -> None:
    b.mcp = MappingProxyType({**b.mcp, e.name: MappingProxyType(e.model_dump(
        include={"status", "error"}))})


FOLDS: dict[type[EventBase], Callable[[_Builder, Any], None]] = {
    _ev.Compacted: _compacted,
    _ev.McpChanged: _mcp_changed,
    SessionStarted: _session_started,
    TurnStarted: _turn_started,
    TurnEnded: _turn_ended,
    PlanMode: _plan_mode,
    PlanProposed: _plan_proposed,
    PlanDecided: _plan_decided,
    PlanCommented: _plan_commented,
    PlanHandoff: _plan_handoff,
    ModelSwitched: _model_switched,
    QuestionAsked: _question_asked,
    QuestionAnswered: _question_answered,
    ToolRequested: _tool_requested,
    ToolDecided: _tool_decided,
    TasksUpdated: _tasks_updated,
    FilesRewound: _files_rewound,
    AgentStarted: _agent_started,
    AgentProgress: _agent_progress,
    AgentEnded: _agent_ended,
    ErrorEvent: _error,
}
"""The fold handler of each event class."""

NOT_FOLDED: frozenset[type[EventBase]] = frozenset({
    Thought,  # shown in the turn's output and the history, nothing to keep in the state
    SessionAsleep,  # the next turn's session:started (resumed) says what changed
    _ev.ApiRetried, _ev.ModelFellBack, _ev.CliUnknown,  # lines in their turn
})
"""Event classes the state deliberately does not change for."""


def check_folds() -> None:
    """Raise ``LookupError`` naming each event class with no fold handler that
    :data:`NOT_FOLDED` does not list either (run at import)."""
    check_table(FOLDS, "fold handler", exempt=NOT_FOLDED)


check_folds()


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
