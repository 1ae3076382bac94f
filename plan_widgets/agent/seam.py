"""The one seam between a session and the Claude Code CLI: what a session needs from a client.

Only :mod:`plan_widgets.agent.sdk` imports ``claude_agent_sdk``; it implements
:class:`AgentClient` over ``ClaudeSDKClient``. Everything above it speaks these SDK-free types,
so the session, the gate and the decisions are tested with an in-process fake client
(``tests/fake_client.py``) in milliseconds, with no kernel and no CLI — the way the SDK's own
tests run behind its ``Transport``.

Messages from the CLI arrive as :mod:`plan_widgets.agent.signals`; permission requests arrive
as :class:`PermissionRequest` and are answered with :class:`Allow` or :class:`Deny`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model.errors import SessionError
from .signals import Signal


@dataclass(frozen=True)
class PermissionRequest:
    """The CLI asks whether a tool may run (its ``can_use_tool`` callback)."""

    tool: str
    input: dict[str, Any]
    tool_use_id: str | None = None
    suggestions: tuple[dict[str, Any], ...] = ()
    """The CLI's suggested rules for "always allow", as plain dicts (they are logged)."""
    title: str | None = None
    agent_id: str | None = None
    """The subagent that asks (its task id); None: the main agent."""
    raw_suggestions: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    """The same suggestions as the client received them, handed back on "always"."""


@dataclass(frozen=True)
class Allow:
    """Let the tool run. ``input`` replaces the tool's input (answers to questions);
    ``mode`` leaves plan mode straight into that mode (``setMode``, destination session);
    ``always`` also applies the request's suggested updates: those at ``rules`` (their
    places in the request's list), or all of them (``rules`` None)."""

    input: dict[str, Any] | None = None
    mode: str | None = None
    always: bool = False
    rules: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Deny:
    """Refuse the tool; the model reads ``message``. ``interrupt`` also stops the turn."""

    message: str
    interrupt: bool = False


Answer = Allow | Deny
PermissionCallback = Callable[[PermissionRequest], Awaitable[Answer]]
ScreenCallback = Callable[[PermissionRequest], Awaitable[Deny | None]]
"""Looks at a tool call before the CLI's own permission check (a ``PreToolUse`` hook): it
runs in every mode, also where ``can_use_tool`` is never asked (acceptEdits lets edits
through); a :class:`Deny` stops the call, None lets the normal check go on."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool that runs inside the host process (an in-process MCP tool; SDK-free here).

    The model calls it as ``mcp__<server>__<name>``. ``handler`` gets the tool's input and
    returns the text the model reads; raising :class:`ToolFailure` returns its message as an
    error result. ``changes_state``: the call changes something (the gate asks the user, and
    refuses it in plan mode); a tool that only reads is allowed without a card."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    """A JSON Schema object for the input."""
    handler: Callable[[dict[str, Any]], Awaitable[Any]]
    """Returns the text the model reads, or ``{"image": <base64>, "mime": ...}``."""
    changes_state: bool = False
    title: str | None = None
    """What a permission card asks about a call (default: "Allow <tool>?")."""


class ToolFailure(Exception):
    """A tool's handler failed in a way the model should read (an error result)."""


@dataclass(frozen=True)
class HostTools:
    """What the host (a notebook's kernel) adds to a session: its tools, the words appended to
    the system prompt, and the file the agent must not write (the open notebook)."""

    tools: tuple[ToolSpec, ...] = ()
    server: str = "kernel"
    """The in-process MCP server's name (the model sees ``mcp__<server>__<tool>``)."""
    prompt: str | None = None
    notebook: str | None = None
    """The absolute path of the notebook open in the frontend, if known."""

    def qualified(self, name: str) -> str:
        """The name the CLI and the model use for one of :attr:`tools`."""
        return f"mcp__{self.server}__{name}"

    def tool(self, cli_name: str) -> ToolSpec | None:
        """The tool the CLI calls ``cli_name`` (``mcp__<server>__<name>``), if it is ours."""
        prefix = f"mcp__{self.server}__"
        if not cli_name.startswith(prefix):
            return None
        name = cli_name[len(prefix):]
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True)
class ClientConfig:
    """What a client is started with (the session's options, resolved)."""

    cwd: str
    mode: str
    """The permission mode the CLI starts in."""
    can_use_tool: PermissionCallback
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment for the CLI (on top of the kernel's)."""
    model: str | None = None
    resume: str | None = None
    session_id: str | None = None
    """The id of a new session (None when resuming)."""
    stderr: Callable[[str], None] | None = None
    cli_path: str | None = None
    file_checkpointing: bool = True
    """The CLI keeps a copy of each file its Write/Edit tools change, per prompt, so a turn's
    files can be rewound (:meth:`AgentClient.rewind_files`)."""
    tools: tuple[ToolSpec, ...] = ()
    """In-process tools, served to the CLI as the MCP server ``tool_server``."""
    tool_server: str = "kernel"
    system_prompt_append: str | None = None
    """Appended to Claude Code's own system prompt (the preset is kept)."""
    screen: ScreenCallback | None = None
    screened_tools: tuple[str, ...] = ()
    """The tools whose calls go through ``screen`` first (by the CLI's tool name)."""
    max_budget_usd: float | None = None
    """The CLI ends the session's turns once it has spent this much (None: no cap)."""
    disallowed_tools: tuple[str, ...] = ()
    """Tools the CLI never runs, in any mode."""
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    """The SDK's other agent options by its names (checked: ``model/agent_options.py``),
    merged with the product's own by the client."""


class AgentClient(Protocol):
    """A connected Claude Code CLI, as a session uses it. One task connects, uses and
    disconnects it (the SDK's task group must be entered and left by one task)."""

    async def connect(self) -> None: ...
    async def query(self, prompt: str, session_id: str, message_id: str | None = None,
                    verbatim: bool = False) -> None:
        """Send a prompt. ``message_id`` (a uuid) becomes the prompt message's id, which is
        also its file checkpoint's id (see :meth:`rewind_files`). ``verbatim``: the CLI
        takes a ``/...`` prompt as text (the SDK's ``verbatim_prompts``, for one prompt)."""
    def signals(self) -> AsyncIterator[Signal]: ...
    async def interrupt(self) -> None: ...
    async def set_permission_mode(self, mode: str) -> None: ...
    async def set_model(self, model: str | None) -> None: ...
    async def disconnect(self) -> None: ...

    async def stop_task(self, task_id: str) -> None:
        """Stop a running subagent (its ``task_started`` id)."""

    async def get_context_usage(self) -> dict[str, Any]:
        """How full the context window is (the CLI's ``/context``; no model request)."""

    async def rewind_files(self, message_id: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Put the files the CLI tracks back as they were when prompt ``message_id`` was sent.
        ``dry_run``: change nothing and say what would change (``filesChanged``,
        ``insertions``, ``deletions``); raises NotImplementedError if the client cannot. A
        rewind that cannot be done raises with the CLI's reason."""

    @property
    def pid(self) -> int | None:
        """The CLI's process id, while it runs."""


ClientFactory = Callable[[ClientConfig], AgentClient]

CONTROL_TIMEOUT = 15.0
"""Seconds a control request (mode, model, interrupt) may take before the CLI counts as hung."""


async def bounded_control(aw: Awaitable[Any], what: str) -> Any:
    """Await a control request to the CLI for at most :data:`CONTROL_TIMEOUT` seconds; any
    failure is a :class:`SessionError` that names ``what`` (its cause kept)."""
    try:
        return await asyncio.wait_for(aw, CONTROL_TIMEOUT)
    except asyncio.TimeoutError as e:
        raise SessionError(f"{what}: the CLI did not answer in {CONTROL_TIMEOUT:g} s") from e
    except SessionError:
        raise
    except Exception as e:
        raise SessionError(f"{what}: {e}") from e
