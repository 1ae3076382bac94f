"""What the CLI said, as typed signals: the SDK's messages, translated once at the seam.

:func:`plan_widgets.agent.sdk.translate` turns each SDK message into a list of these (a pure
function, unit-tested); a fake client yields them directly. The session reacts to each kind in
one handler (``Session._on_<kind>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MessageStart:
    """A model message begins streaming (``message_start``)."""

    message_id: str | None


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text of the agent's top-level message."""

    text: str


@dataclass(frozen=True)
class AssistantText:
    """A whole text block of a finished message (shown only if it was not streamed)."""

    text: str
    message_id: str | None


@dataclass(frozen=True)
class ToolUse:
    """The agent calls a tool."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """A tool call's result, as the model will read it."""

    tool_use_id: str
    content: Any
    is_error: bool
    data: Any = None
    """The result in structured form, as the CLI reports it beside the text (the SDK's
    ``tool_use_result``; e.g. a created task's id). None when there is none."""


@dataclass(frozen=True)
class ModelReport:
    """The model the CLI says it uses (the init message, or an assistant message)."""

    model: str


@dataclass(frozen=True)
class ModeReport:
    """The permission mode the CLI confirms. ``initial``: from a turn's init message, which
    repeats the mode in force (only a change matters); else a status message (a change)."""

    mode: str
    initial: bool = False


@dataclass(frozen=True)
class TurnResult:
    """The end of a turn (``ResultMessage``)."""

    subtype: str
    is_error: bool = False
    cost_usd: float | None = None
    """The CLI process's running total, not this turn's cost."""
    usage: dict[str, Any] = field(default_factory=dict)
    duration_ms: int | None = None
    num_turns: int | None = None
    result: str | None = None
    api_error_status: int | None = None
    errors: tuple[str, ...] = ()
    terminal_reason: str | None = None

    @property
    def input_tokens(self) -> int:
        """Input tokens, cache reads and writes included."""
        u = self.usage
        return sum(int(u.get(k) or 0) for k in (
            "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))

    @property
    def output_tokens(self) -> int:
        return int(self.usage.get("output_tokens") or 0)


Signal = (MessageStart | TextDelta | AssistantText | ToolUse | ToolResult | ModelReport
          | ModeReport | TurnResult)
