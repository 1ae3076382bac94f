"""The model: typed session events, and the state folded from them (no I/O here).

Names are loaded on first use (``events`` imports pydantic, about 80 ms): ``errors`` and
``options`` stay cheap for ``%load_ext``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .events import (
        EVENT_ADAPTER,
        EVENT_TYPES,
        EVENTS_ADAPTER,
        MAX_ERRORS,
        PERMISSION_MODES,
        Actor,
        AgentEnded,
        AgentProgress,
        AgentStarted,
        AgentStatus,
        ApiRetried,
        CliUnknown,
        Compacted,
        DecisionKind,
        ErrorEvent,
        Event,
        EventBase,
        FilesRewound,
        McpChanged,
        ModelFellBack,
        ModelSwitched,
        ModeSource,
        ModeState,
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
        dump_event,
        gc_paused,
        parse_event,
    )
    from .folding import apply, fold
    from .state import AgentRecord, Cost, DecisionRecord, SessionState

_FROM = {"AgentRecord": ".state", "Cost": ".state", "DecisionRecord": ".state",
         "SessionState": ".state", "apply": ".folding", "fold": ".folding"}
__all__ = [
    "Actor",
    "AgentEnded",
    "AgentProgress",
    "AgentRecord",
    "AgentStarted",
    "AgentStatus",
    "ApiRetried",
    "CliUnknown",
    "Compacted",
    "Cost",
    "DecisionKind",
    "DecisionRecord",
    "EVENTS_ADAPTER",
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "ErrorEvent",
    "Event",
    "EventBase",
    "FilesRewound",
    "MAX_ERRORS",
    "McpChanged",
    "ModelFellBack",
    "ModeSource",
    "ModeState",
    "ModelSwitched",
    "PERMISSION_MODES",
    "PlanCommented",
    "PlanHandoff",
    "PlanDecided",
    "PlanMode",
    "PlanProposed",
    "QuestionAnswered",
    "QuestionAsked",
    "SessionAsleep",
    "SessionStarted",
    "SessionState",
    "TasksUpdated",
    "Thought",
    "ToolDecided",
    "ToolRequested",
    "TurnEnded",
    "TurnStarted",
    "apply",
    "check_table",
    "dump_event",
    "fold",
    "gc_paused",
    "parse_event",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_FROM.get(name, ".events"), __name__)
    return getattr(module, name)
