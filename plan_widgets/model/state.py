"""What a session's log says, as data: :class:`SessionState`, its decisions, its cost.

The state is a pure fold of the log (:mod:`plan_widgets.model.folding`), so a restarted kernel
that re-reads the log shows exactly what happened.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from .events import (
    DecisionKind,
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
    back_to: str | None = None
    """Approved for this plan only: the mode the session went back to after its work."""
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
    comments: tuple[Mapping[str, Any], ...] = ()
    """A plan's comments on its lines: ``{"line", "quote", "note", "section"}``, in order."""

    @property
    def pending(self) -> bool:
        """Whether nobody has decided yet."""
        return self.status == "pending"


class AgentRecord(NamedTuple):
    """A subagent as the log tells it (``agent:*`` events; immutable)."""

    id: str
    description: str = ""
    tool_use_id: str | None = None
    subagent_type: str | None = None
    background: bool = False
    status: str = "running"
    """running, or how it ended: completed / failed / stopped / killed."""
    started: float | None = None
    ended: float | None = None
    activity: str | None = None
    last_tool: str | None = None
    tokens: int = 0
    tool_uses: int = 0
    duration_ms: int | None = None
    summary: str | None = None
    turn: int = 0

    @property
    def running(self) -> bool:
        return self.status == "running"

    def elapsed(self, now: float) -> float:
        """Seconds it has run (until it ended)."""
        if self.started is None:
            return 0.0
        return max(0.0, (self.ended or now) - self.started)


_EMPTY: Mapping[str, DecisionRecord] = MappingProxyType({})
_NONE: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


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
    back_to: str | None = None
    """A mode approved for one plan only is in force: the resting mode to go back to once the
    plan's work ends (None: no such return pending; agent/plan_scope.py)."""
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
    last_compaction: Mapping[str, Any] | None = None
    """The latest compaction: ``ts``, ``turn``, ``trigger``, ``pre_tokens``, ``post_tokens``."""
    mcp: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _NONE)
    """The MCP servers by name: ``status`` and ``error`` as last reported."""
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
    agents: tuple[AgentRecord, ...] = ()
    """Every subagent of the session, in the order they started (``agent:*``)."""
    fresh_from: str | None = None
    """The conversation whose approved plan started this one (Approve, start fresh)."""
    went_on_in: str | None = None
    """The conversation this one's approved plan started (Approve, start fresh): this one
    ended there."""

    @property
    def running_agents(self) -> list[AgentRecord]:
        """The subagents still running, oldest first."""
        return [a for a in self.agents if a.running]

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
            elif name == "agents":
                value = [a._asdict() for a in value]
            elif isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            elif isinstance(value, Mapping):  # last_compaction, mcp
                value = {k: dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
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
