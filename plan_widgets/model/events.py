"""Durable session events and the state folded from them.

Everything that matters about a session (plans, decisions, mode and model changes, turns,
cost) is an event appended to a log. :class:`SessionState` is a pure fold of that log, so a
restarted kernel that re-reads the log shows exactly what happened.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

Actor = Literal["user", "code", "rule", "unattended", "timeout", "interrupt", "close", "cli",
                "gate", "restart"]
"""Who ended a decision. ``rule``: an unattended rule or a Python decider (its text in the
event's ``rule``); ``unattended``: no one could click and no rule decided (docs/unattended.md)."""
ModeState = Literal["requested", "effective", "refused"]
ModeSource = Literal["user", "model", "approval", "resume", "start", "plan_end"]  # plan_scope.py
DecisionKind = Literal["plan", "question", "tool"]

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
MAX_ERRORS = 20
"""How many recent error lines :attr:`SessionState.errors` keeps."""


EVENT_TYPES: dict[str, type[EventBase]] = {}
"""Event classes by their ``type`` tag: every subclass of :class:`EventBase` that declares a
``type`` registers itself here when it is defined."""


class EventBase(BaseModel):
    """What every event has. A subclass that declares a ``type`` tag is an event: it registers
    itself in :data:`EVENT_TYPES` (a tag defined twice raises ``TypeError``), and the checks
    at import make sure it is in :data:`Event`, has a fold handler (or is listed as not
    folded, :mod:`.folding`) and a one-line summary (``render/history.py``)."""

    # Fields this version does not know (a log from a newer one, or edited by hand) are kept
    # in ``model_extra`` and written back as they were: the fold ignores them.
    model_config = ConfigDict(frozen=True, extra="allow")

    ts: float = Field(default_factory=time.time)
    """Epoch seconds."""
    seq: int = 0
    """Position in the log, assigned by the store on append (1, 2, ...)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("type")
        if field is None:
            return  # not an event of its own: a base for others
        tag = field.default
        known = EVENT_TYPES.get(tag)
        if known is not None and known is not cls:
            raise TypeError(f"event type {tag!r} is defined twice: by {known.__name__} "
                            f"and by {cls.__name__}")
        EVENT_TYPES[tag] = cls


class SessionStarted(EventBase):
    type: Literal["session:started"] = "session:started"
    session_id: str
    name: str
    cwd: str
    resting_mode: str
    model: str | None = None
    plan_model: str | None = None
    resumed_from: str | None = None
    """The id of the session this one continues (its log is this log's beginning)."""
    scripted: str | None = None
    """The scripted-model file the session answers from (offline runs), if any."""


class TurnStarted(EventBase):
    type: Literal["turn:started"] = "turn:started"
    turn: int
    prompt: str
    plan: bool = False
    message_id: str | None = None
    """The uuid the prompt was sent with: the CLI's file checkpoint for this turn (rewind)."""
    origin: str = "user"
    """Who started the turn: ``user`` (a prompt sent from here), or ``agent``: the CLI
    started it by itself (a background agent's notification, a scheduled wakeup); its
    ``prompt`` then says why, as far as the CLI told us."""


class TurnEnded(EventBase):
    type: Literal["turn:ended"] = "turn:ended"
    turn: int
    result: str
    """The SDK ResultMessage.subtype, or "interrupted" / "cli_died" / "restarted" (the kernel
    stopped during the turn; written when the session is resumed)."""
    is_error: bool = False
    cost_usd: float | None = None
    """``ResultMessage.total_cost_usd``: the running total of the CLI process (a NaN or an
    infinity becomes None: JSON cannot hold them, and the log must read back as written)."""

    @field_validator("cost_usd")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        return v if v is None or math.isfinite(v) else None
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int | None = None
    message: str | None = None
    files: list[str] = Field(default_factory=list)
    """The files this turn's Write/Edit tools changed (what a rewind can put back)."""
    origin: str | None = None
    """What started the turn, as the CLI's result says (``ResultMessage.origin.kind``:
    ``task-notification``, ...; None for a user's prompt)."""


class PlanMode(EventBase):
    type: Literal["plan:mode"] = "plan:mode"
    mode: str
    state: ModeState
    source: ModeSource
    detail: str | None = None


class PlanProposed(EventBase):
    type: Literal["plan:proposed"] = "plan:proposed"
    decision_id: str
    plan: str
    plan_file: str | None = None
    tool_use_id: str | None = None


class PlanDecided(EventBase):
    type: Literal["plan:decided"] = "plan:decided"
    decision_id: str
    outcome: Literal["approved", "rejected", "expired", "cancelled"]
    feedback: str | None = None
    mode_after: str | None = None
    by: Actor
    rule: str | None = None
    edited: bool = False
    """The user edited the plan before approving it."""
    approved_plan: str | None = None
    """The text approved, when it differs from the proposed one (``edited``); the proposed
    text stays in its ``plan:proposed`` event."""
    back_to: str | None = None  # for this plan only: the resting mode after (agent/plan_scope)


class PlanCommented(EventBase):
    """The user commented on a line of a pending plan (or took a comment back)."""

    type: Literal["plan:commented"] = "plan:commented"
    decision_id: str
    line: int
    """The line of the plan (1-based) the comment is about."""
    quote: str
    note: str
    section: bool = False
    """The line is a heading: the comment is about its section."""
    removed: bool = False


class PlanHandoff(EventBase):
    """Approve, start fresh: the approved plan became the first message of a new conversation
    (the CLI's ``/clear``, then the plan as a prompt). Ends the old conversation's log and
    follows ``session:started`` at the new one's beginning."""

    type: Literal["plan:handoff"] = "plan:handoff"
    decision_id: str
    old_id: str
    """The planning conversation (the CLI's session id, and its log's)."""
    new_id: str
    plan: str
    """The plan as approved (the user's edit, if any), sent as the new first message."""
    mode: str
    """The mode the new conversation runs in."""


class ModelSwitched(EventBase):
    type: Literal["model:switched"] = "model:switched"
    from_model: str | None = None
    to_model: str | None = None
    why: str


class QuestionAsked(EventBase):
    type: Literal["question:asked"] = "question:asked"
    decision_id: str
    questions: list[dict[str, Any]]
    tool_use_id: str | None = None


class QuestionAnswered(EventBase):
    type: Literal["question:answered"] = "question:answered"
    decision_id: str
    outcome: Literal["answered", "expired", "cancelled"]
    answers: dict[str, str] = Field(default_factory=dict)
    notes: dict[str, str] = Field(default_factory=dict)
    """The user's optional notes, keyed by question text."""
    by: Actor
    rule: str | None = None


class ToolRequested(EventBase):
    type: Literal["tool:requested"] = "tool:requested"
    decision_id: str
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    suggestions: list[dict[str, Any]] = Field(default_factory=list)
    tool_use_id: str | None = None


class ToolDecided(EventBase):
    type: Literal["tool:decided"] = "tool:decided"
    decision_id: str
    outcome: Literal["allowed", "always", "denied", "expired", "cancelled"]
    reason: str | None = None
    by: Actor
    rule: str | None = None


class TasksUpdated(EventBase):
    type: Literal["tasks:updated"] = "tasks:updated"
    turn: int
    tasks: list[dict[str, Any]] = Field(default_factory=list)
    """The agent's whole task list after the change: ``{"id", "subject", "status",
    "active_form"}``, status ``pending`` / ``in_progress`` / ``completed``."""


class FilesRewound(EventBase):
    type: Literal["files:rewound"] = "files:rewound"
    turn: int
    """The files are as they were before this turn's prompt was sent."""
    message_id: str
    files: list[str] = Field(default_factory=list)
    by: Actor = "user"


class Thought(EventBase):
    """The model's thinking in a turn (a whole thinking block; shown folded, never in the
    answer)."""

    type: Literal["turn:thinking"] = "turn:thinking"
    turn: int
    text: str


AgentStatus = Literal["running", "completed", "failed", "stopped", "killed"]


class AgentStarted(EventBase):
    """A subagent started (the CLI's ``task_started``): launched by an ``Agent`` call."""

    type: Literal["agent:started"] = "agent:started"
    agent_id: str
    """The CLI's task id (what ``stop_task`` takes)."""
    tool_use_id: str | None = None
    """The ``Agent`` call that launched it (its messages carry it as their parent)."""
    description: str = ""
    subagent_type: str | None = None
    background: bool = False
    prompt: str | None = None
    turn: int = 0
    """The turn whose ``Agent`` call launched it."""


class AgentProgress(EventBase):
    """A running subagent's progress (the CLI's ``task_progress``, about one per tool)."""

    type: Literal["agent:progress"] = "agent:progress"
    agent_id: str
    activity: str | None = None
    """What it does now, in the CLI's words."""
    last_tool: str | None = None
    tokens: int = 0
    tool_uses: int = 0
    duration_ms: int | None = None


class AgentEnded(EventBase):
    """A subagent ended (``task_notification``, or a terminal ``task_updated``; or the CLI
    exited, the session closed, the kernel stopped)."""

    type: Literal["agent:ended"] = "agent:ended"
    agent_id: str
    status: AgentStatus
    summary: str | None = None
    tokens: int | None = None
    tool_uses: int | None = None
    duration_ms: int | None = None


class SessionAsleep(EventBase):
    """The session's CLI exited to save memory (idle, or the kernel's cap on live CLIs); the
    next turn resumes the same conversation (a ``session:started`` resumed from this one)."""

    type: Literal["session:asleep"] = "session:asleep"
    reason: Literal["idle", "cap"]
    idle_seconds: float


class ApiRetried(EventBase):  # a retry, or a rate limit (attempt 0): docs/cli.md#bad-day
    type: Literal["api:retry"] = "api:retry"
    turn: int = 0
    reason: str
    attempt: int = 0
    max_retries: int | None = None
    delay_ms: int | None = None
    status: int | None = None


class ModelFellBack(EventBase):
    type: Literal["model:fallback"] = "model:fallback"
    turn: int = 0
    kind: str
    to_model: str | None = None
    from_model: str | None = None
    reason: str | None = None


class Compacted(EventBase):
    type: Literal["context:compacted"] = "context:compacted"
    turn: int = 0
    trigger: str
    pre_tokens: int | None = None
    post_tokens: int | None = None


class McpChanged(EventBase):
    type: Literal["mcp:status"] = "mcp:status"
    name: str
    status: str
    error: str | None = None


class CliUnknown(EventBase):  # a message this version does not know (docs/cli.md#bad-day)
    type: Literal["cli:unknown"] = "cli:unknown"
    kind: str
    detail: str = ""


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    kind: str
    message: str


# Spelled out so the type checker knows it; checked below against EVENT_TYPES, so an event
# class left out of it fails at import.
Event = Annotated[
    Union[  # noqa: UP007  (a discriminated union reads best spelled out)
        SessionStarted,
        TurnStarted,
        TurnEnded,
        PlanMode,
        PlanProposed,
        PlanDecided,
        PlanCommented,
        PlanHandoff,
        ModelSwitched,
        QuestionAsked,
        QuestionAnswered,
        ToolRequested,
        ToolDecided,
        TasksUpdated,
        FilesRewound,
        Thought,
        AgentStarted, AgentProgress, AgentEnded,
        SessionAsleep,
        ApiRetried, ModelFellBack, Compacted, McpChanged, CliUnknown,
        ErrorEvent,
    ],
    Field(discriminator="type"),
]


def check_table(table: Iterable[type], what: str, exempt: Iterable[type] = ()) -> None:
    """Raise ``LookupError`` naming each event class in :data:`EVENT_TYPES` that ``table``
    (a fold handler table, the summaries, ...: keyed by event class) lacks and ``exempt``
    does not list, and each key that is not a registered event."""
    have = set(table) | set(exempt)
    events = set(EVENT_TYPES.values())
    missing = sorted(c.__name__ for c in events - have)
    if missing:
        raise LookupError(f"no {what} for event(s): {', '.join(missing)}")
    strays = sorted(c.__name__ for c in have - events)
    if strays:
        raise LookupError(f"{what} for unknown event class(es): {', '.join(strays)}")


check_table(get_args(get_args(Event)[0]), "member of the Event union")

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])


def parse_event(line: str | bytes) -> Event:
    """Parse one JSON line into its event class (raises pydantic.ValidationError)."""
    return EVENT_ADAPTER.validate_json(line)


def dump_event(event: Event) -> str:
    """Serialize an event to one JSON line (no newline inside, none at the end)."""
    return event.model_dump_json()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small acyclic objects (it would otherwise
    rescan them again and again)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
