"""What the CLI said, as typed signals: the SDK's messages, translated once at the seam.

:func:`plan_widgets.agent.sdk.translate` turns each SDK message into a list of these (a pure
function, unit-tested); a fake client yields them directly. The session's runner
(:mod:`runner`) reacts to each kind in one handler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MessageStart:
    """A model message begins streaming (``message_start``)."""

    message_id: str | None


@dataclass(slots=True)
class TextDelta:
    """A piece of streamed text of the agent's top-level message.

    One is made per streamed delta, so it is the cheapest kind to make: slots and not frozen
    (a frozen dataclass sets each field through ``object.__setattr__``, twice the cost);
    treat it as frozen all the same."""

    text: str


@dataclass(frozen=True)
class AssistantText:
    """A whole text block of a finished message (shown only if it was not streamed)."""

    text: str
    message_id: str | None


@dataclass(frozen=True)
class ToolUse:
    """The agent calls a tool (``parent``: the ``Agent`` call of the subagent that calls it;
    None for the main agent)."""

    id: str
    name: str
    input: dict[str, Any]
    parent: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """A tool call's result, as the model will read it."""

    tool_use_id: str
    content: Any
    is_error: bool
    data: Any = None
    """The result in structured form, as the CLI reports it beside the text (the SDK's
    ``tool_use_result``; e.g. a created task's id). None when there is none."""
    parent: str | None = None
    """The ``Agent`` call whose subagent got this result (None: the main agent)."""


@dataclass(frozen=True)
class SubagentText:
    """A whole text block of a subagent (``parent``: the ``Agent`` call that launched it)."""

    parent: str
    text: str


@dataclass(frozen=True)
class PromptEcho:
    """The CLI took in a prompt sent from here (its replay, with the ``uuid`` we gave it).

    MEASURED (CLI 2.1.332, ``--replay-user-messages``): the echo comes before the first
    streamed message of the turn that answers the prompt, also when the CLI ran a turn of
    its own first (a background agent's notification); a turn whose content arrives with no
    echo before it was started by the CLI itself."""

    uuid: str


@dataclass(frozen=True)
class Injected:
    """A message the CLI put into the conversation by itself (``origin.kind``, e.g.
    ``task-notification``: a background agent ended while a turn ran)."""

    kind: str
    text: str


@dataclass(frozen=True)
class AgentStart:
    """A subagent started (``task_started``)."""

    agent_id: str
    tool_use_id: str | None
    description: str
    subagent_type: str | None = None
    background: bool = False
    prompt: str | None = None


@dataclass(frozen=True)
class AgentStep:
    """A subagent's progress (``task_progress``)."""

    agent_id: str
    activity: str | None = None
    last_tool: str | None = None
    tokens: int = 0
    tool_uses: int = 0
    duration_ms: int | None = None


@dataclass(frozen=True)
class AgentEnd:
    """A subagent ended (``task_notification``, or ``task_updated`` with a final status)."""

    agent_id: str
    status: str
    summary: str | None = None
    tokens: int | None = None
    tool_uses: int | None = None
    duration_ms: int | None = None


@dataclass(frozen=True)
class Thinking:
    """A whole thinking block of the main agent: always logged, shown (folded, never in the
    answer) only when the session's ``show_thinking`` is on."""

    text: str


@dataclass(frozen=True)
class ModelReport:
    """The model the CLI says it uses (the init message, or a main-agent message that is not
    the CLI's own synthetic one)."""

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
    origin: str | None = None
    """What started the CLI's turn (``origin.kind``): None or ``human`` for a prompt sent
    from here; ``task-notification`` etc. for a turn the CLI started by itself."""
    session_id: str | None = None
    """The CLI's conversation id (after ``/clear``: the new conversation's)."""
    prompts: tuple[str, ...] = ()
    """The uuids of the prompts this turn took in (``user_message_uuid(s)``): a result ends
    the user's turn only if its prompt's uuid is here."""

    @property
    def self_started(self) -> bool:
        """Whether the CLI started this turn by itself (see :attr:`origin`)."""
        return self.origin not in (None, "human")

    @property
    def input_tokens(self) -> int:
        """Input tokens, cache reads and writes included."""
        u = self.usage
        return sum(int(u.get(k) or 0) for k in (
            "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))

    @property
    def output_tokens(self) -> int:
        return int(self.usage.get("output_tokens") or 0)


@dataclass(frozen=True)
class MessageEnd:
    """A streamed model message is complete (``message_delta`` with its stop reason). A
    message started and never ended was cut: its retry streams it again (docs/cli.md#bad-day)."""


@dataclass(frozen=True)
class ApiRetry:
    """The CLI waits to retry a failed API request (``api_retry``); ``status`` is None when
    no HTTP answer came (a cut stream, no connection)."""

    attempt: int
    max_retries: int | None
    delay_ms: int | None
    status: int | None
    error: str | None


@dataclass(frozen=True)
class RateLimit:
    """A rate limit report (``rate_limit_event``): ``allowed``, ``allowed_warning`` or
    ``rejected``, and when the limit resets (epoch seconds)."""

    status: str
    resets_at: float | None = None
    limit_type: str | None = None


@dataclass(frozen=True)
class Fallback:
    """The CLI switched models (``model_fallback``, ``model_refusal_fallback``)."""

    kind: str
    to_model: str | None = None
    from_model: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Compacting:
    """The CLI's ``status`` about compaction: running (``active``), or done with a
    ``result`` (``success``/``failed``) and its ``error``."""

    active: bool
    result: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Compacted:
    """The conversation was compacted (``compact_boundary``)."""

    trigger: str
    pre_tokens: int | None = None
    post_tokens: int | None = None
    uuid: str | None = None


@dataclass(frozen=True)
class McpServers:
    """The session's MCP servers and their status (``init``, ``get_mcp_status()``):
    ``(name, status, error)`` each."""

    servers: tuple[tuple[str, str, str | None], ...]


@dataclass(frozen=True)
class Notice:
    """A notice of the CLI's own for the user (``informational``), e.g. "Raised this
    conversation's auto-compact window from 400k to 1m tokens"."""

    text: str


@dataclass(frozen=True)
class Unknown:
    """A message (or ``system`` subtype) this version does not know: logged, shown quietly,
    never swallowed (docs/cli.md#bad-day)."""

    kind: str
    detail: str = ""


Signal = (MessageStart | TextDelta | AssistantText | ToolUse | ToolResult | ModelReport
          | ModeReport | TurnResult | SubagentText | PromptEcho | Injected | AgentStart
          | AgentStep | AgentEnd | Thinking | MessageEnd | ApiRetry | RateLimit | Fallback
          | Compacting | Compacted | McpServers | Notice | Unknown)
