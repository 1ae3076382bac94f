"""The only module that imports ``claude_agent_sdk``: :class:`SdkClient` implements the seam
(:class:`plan_widgets.agent.seam.AgentClient`) over ``ClaudeSDKClient``.

It translates both ways: the SDK's messages into :mod:`signals` (:func:`translate`, a pure
function), and our permission answers into the SDK's ``PermissionResult`` types. Importing this
module imports the SDK (about 0.9 s, mostly its mcp dependency, once an unused grammar is left
out: :mod:`sdk_import`), so a session imports it in a thread while the cell's widgets are built
(docs/benchmarks.md, figure 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import warnings
from collections.abc import AsyncIterator
from typing import Any

from .sdk_import import deferring_iri_grammar, internal

with deferring_iri_grammar():  # (1.5 s of its 2.4 s: sdk_import's docstring)
    import claude_agent_sdk  # noqa: F401

from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ConversationResetMessage,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ThinkingBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
)
from claude_agent_sdk import __version__ as _sdk_version
from claude_agent_sdk import tool as sdk_tool

from . import cli_system, procgroup, sdk_options
from . import signals as sig
from .seam import Allow, Answer, ClientConfig, PermissionRequest, ToolFailure, ToolSpec

# where the SDK starts the CLI (procgroup); its parser of the raw stream (SdkClient.signals)
_subprocess_cli = internal("claude_agent_sdk._internal.transport.subprocess_cli")
_parse_message = internal("claude_agent_sdk._internal.message_parser", "parse_message")
logging.getLogger("claude_agent_sdk").addHandler(logging.NullHandler())  # we report failures
log = logging.getLogger("plan_widgets")
_SYNTHETIC = "<synthetic>"
"""The model name of the CLI's own messages (its report of an API failure)."""
_SAID_ELSEWHERE = ("API Error", "Not enough messages to compact")
"""A synthetic message that starts so repeats what a result or a status said."""


class CLIExited(RuntimeError):
    """The CLI process exited while starting (``exit_code``, negative: killed by a signal)."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(f"the Claude Code CLI exited with code {exit_code}")
        self.exit_code = exit_code


class SdkClient:
    """:class:`~plan_widgets.agent.seam.AgentClient` over the real CLI."""

    def __init__(self, config: ClientConfig) -> None:
        self._config = config
        self._spawned: list[Any] = []
        self.server_info: dict[str, Any] | None = None
        """The CLI's answer to ``initialize`` (its commands, models, ...), once connected."""
        self.reported: dict[str, Any] = {}
        """The newest ``slash_commands`` and ``skills`` of its ``init`` message."""
        with warnings.catch_warnings():
            # bypassPermissions skips can_use_tool for ordinary tools (the SDK warns); plan
            # mode still asks, so plan approval keeps working in that resting mode.
            warnings.simplefilter("ignore")
            self._client = ClaudeSDKClient(_options(config, self._permission))

    async def connect(self) -> None:
        try:
            with procgroup.own_process_group(_subprocess_cli, self._spawned.append):
                # (in its own process group: a kernel interrupt spares it)
                await self._client.connect()
            # the commands and skills it offers (no request: the SDK keeps its answer)
            self.server_info = await self._client.get_server_info()
        except Exception as e:  # raised again: as is, or as the CLI's exit
            code = await self._exit_code()
            if code is None:
                raise
            log.debug("connect failed; the CLI had exited with %s", code, exc_info=True)
            # the SDK says "Failed to write to process stdin"; the real cause is that it exited
            raise CLIExited(code) from e

    async def query(self, prompt: str, session_id: str, message_id: str | None = None,
                    verbatim: bool = False) -> None:
        if message_id is None and not verbatim:
            await self._client.query(prompt, session_id=session_id)
            return

        # Our own uuid on the prompt message: the CLI takes it as the message's id and as its
        # file checkpoint's id (measured: docs/cli.md#checkpoints), so no replayed message is
        # needed.
        async def one() -> AsyncIterator[dict[str, Any]]:
            yield {"type": "user", "session_id": session_id, "parent_tool_use_id": None,
                   "message": {"role": "user", "content": prompt},
                   **({"uuid": message_id} if message_id else {}),
                   # as the SDK's verbatim_prompts stamps a prompt (for this one only)
                   **({"client_composed": True} if verbatim else {})}

        await self._client.query(one(), session_id=session_id)

    async def signals(self) -> AsyncIterator[sig.Signal]:
        # The SDK skips a message type it does not know (and raises on one it cannot parse):
        # read its raw stream when it has one, so such a message is said, not dropped.
        raw = getattr(getattr(self._client, "_query", None), "receive_messages", None)
        if raw is None or _parse_message is None:  # pragma: no cover - its layout changed
            async for msg in self._client.receive_messages():
                for signal in self._seen(msg):
                    yield signal
            return
        async for data in raw():
            parsed: Any
            try:
                parsed = _parse_message(data)
            except Exception:  # noqa: BLE001 - a message it cannot parse: said, not fatal
                parsed = None
            for signal in (self._seen(parsed) if parsed is not None
                           else cli_system.unknown_type(data)):
                yield signal

    def _seen(self, msg: Any) -> list[sig.Signal]:
        """``msg``'s signals; the commands and skills it reports are kept (``reported``)."""
        if isinstance(msg, SystemMessage) and msg.subtype in ("init", "commands_changed"):
            self.reported.update({k: v for k, v in (msg.data or {}).items()
                                  if k in ("slash_commands", "skills", "commands")})
        return translate(msg)

    async def mcp_status(self) -> sig.McpServers | None:
        """The MCP servers' status now (``get_mcp_status()``, with each one's error)."""
        return cli_system.mcp_servers(await self._client.get_mcp_status())

    async def interrupt(self) -> None:
        await self._client.interrupt()

    async def set_permission_mode(self, mode: str) -> None:
        await self._client.set_permission_mode(mode)  # type: ignore[arg-type]

    async def set_model(self, model: str | None) -> None:
        await self._client.set_model(model)

    async def stop_task(self, task_id: str) -> None:
        await self._client.stop_task(task_id)

    async def disconnect(self) -> None:
        proc = self._process()
        try:
            await self._client.disconnect()
        finally:  # a CLI that never answered (hung, or stopped) must not outlive its session
            if proc is not None and getattr(proc, "returncode", 0) is None:
                with contextlib.suppress(ProcessLookupError, OSError):
                    proc.kill()

    async def get_context_usage(self) -> dict[str, Any]:
        return dict(await self._client.get_context_usage())

    async def rewind_files(self, message_id: str, *, dry_run: bool = False) -> dict[str, Any]:
        if not dry_run:
            await self._client.rewind_files(message_id)  # raises with the CLI's reason
            return {"canRewind": True}
        # The CLI answers a dry run (``dry_run`` in its rewind_files control request: what
        # would change, touching nothing), but the SDK's rewind_files() has no such parameter
        # and drops the answer. Its private control-request call is the only way to it here;
        # if the SDK changed, say so and let the caller list the files its turns touched.
        send = getattr(getattr(self._client, "_query", None), "_send_control_request", None)
        if send is None:
            raise NotImplementedError("this claude-agent-sdk has no control-request call")
        answer = await send({"subtype": "rewind_files", "user_message_id": message_id,
                             "dry_run": True})
        if not isinstance(answer, dict):
            raise NotImplementedError(f"unexpected dry-run answer: {answer!r}"[:200])
        return dict(answer)

    @property
    def pid(self) -> int | None:
        """The CLI's process id (from the SDK's transport; None if it is not running)."""
        return getattr(self._process(), "pid", None)

    async def _exit_code(self, wait: float = 1.0) -> int | None:
        """The CLI's exit code, if it has exited (or does within ``wait`` seconds)."""
        proc = self._process()
        if proc is None:
            return None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), wait)
        code = getattr(proc, "returncode", None)
        return code if isinstance(code, int) else None

    def _process(self) -> Any:
        """The CLI's process object: as it was started, else the SDK transport's (an SDK
        internal: None if its layout changed)."""
        if self._spawned:
            return self._spawned[-1]
        return getattr(getattr(self._client, "_transport", None), "_process", None)

    async def _permission(self, tool: str, tool_input: dict[str, Any],
                          ctx: ToolPermissionContext) -> Any:
        raw = tuple(getattr(ctx, "suggestions", None) or ())
        request = PermissionRequest(
            tool=tool, input=dict(tool_input), tool_use_id=getattr(ctx, "tool_use_id", None),
            suggestions=tuple(_suggestion_dict(s) for s in raw),
            title=getattr(ctx, "title", None), agent_id=getattr(ctx, "agent_id", None),
            raw_suggestions=raw,
        )
        return to_sdk(await self._config.can_use_tool(request), request)


def _options(config: ClientConfig, permission: Any) -> ClaudeAgentOptions:
    user = dict(config.agent_options)
    extra: dict[str, Any] = sdk_options.passed(
        user, {f.name for f in dataclasses.fields(ClaudeAgentOptions)},
        f"claude-agent-sdk {_sdk_version}", AgentDefinition)
    servers: dict[str, Any] = dict(user.get("mcp_servers") or {})
    if config.tools:
        servers[config.tool_server] = create_sdk_mcp_server(config.tool_server, tools=[
            _sdk_tool(t) for t in config.tools])
    if servers:
        extra["mcp_servers"] = servers
    extra["system_prompt"] = sdk_options.system_prompt(user.get("system_prompt"), [
        config.system_prompt_append, user.get("append_system_prompt")])
    if config.screen is not None and config.screened_tools:
        extra["hooks"] = {"PreToolUse": [HookMatcher(
            matcher="|".join(config.screened_tools), hooks=[sdk_options.screen_hook(config)])]}
    return ClaudeAgentOptions(
        cwd=config.cwd,
        model=config.model,
        permission_mode=config.mode,  # type: ignore[arg-type]
        can_use_tool=permission,
        include_partial_messages=True,
        env=dict(config.env),
        stderr=config.stderr,
        resume=config.resume,
        session_id=config.session_id,
        cli_path=config.cli_path,
        enable_file_checkpointing=config.file_checkpointing,
        max_budget_usd=config.max_budget_usd, disallowed_tools=list(config.disallowed_tools),
        # the CLI echoes each prompt it takes in: the echo tells a user's turn from one the
        # CLI starts by itself (signals.PromptEcho); subagents' text is shown under their
        # Agent line (a foreground subagent's is not sent without it)
        extra_args={**dict(user.get("extra_args") or {}), "replay-user-messages": None},
        forward_subagent_text=True,
        **extra,
    )


def _sdk_tool(spec: ToolSpec) -> Any:
    """One of our tools as the SDK's in-process MCP tool. No ``readOnlyHint``: in plan mode
    this CLI refuses a read-only MCP tool by itself (docs/notebook-context.md), while an
    unannotated one reaches ``can_use_tool``, where the gate decides."""

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        try:
            got = await spec.handler(dict(args or {}))
        except ToolFailure as e:
            return {"content": [{"type": "text", "text": str(e)}], "is_error": True}
        if isinstance(got, dict) and "image" in got:
            return {"content": [{"type": "image", "data": got["image"], "mimeType": got["mime"]}]}
        return {"content": [{"type": "text", "text": str(got)}]}

    return sdk_tool(spec.name, spec.description, dict(spec.input_schema))(handler)


def _suggestion_dict(s: Any) -> dict[str, Any]:
    try:
        return dict(s.to_dict())
    except (AttributeError, TypeError, ValueError):
        return {"repr": repr(s)}


def to_sdk(answer: Answer, request: PermissionRequest) -> Any:
    """Our answer as the SDK's ``PermissionResult``."""
    if not isinstance(answer, Allow):
        return PermissionResultDeny(message=answer.message, interrupt=answer.interrupt)
    updates: list[Any] | None = None
    if answer.mode is not None:
        updates = [PermissionUpdate(type="setMode", mode=answer.mode,  # type: ignore[arg-type]
                                    destination="session")]
    elif answer.always:
        raw = request.raw_suggestions
        updates = list(raw) if answer.rules is None else [
            raw[i] for i in answer.rules if 0 <= i < len(raw)]
    return PermissionResultAllow(updated_input=answer.input, updated_permissions=updates)


# -- translation -----------------------------------------------------------------------------


def translate(msg: Any) -> list[sig.Signal]:
    """The signals one SDK message carries (a pure function of the message)."""
    if type(msg) is StreamEvent:  # nearly every message while text streams: no search
        return _stream_event(msg)
    for cls, fn in _TRANSLATORS:
        if isinstance(msg, cls):
            return fn(msg)
    return [sig.Unknown(type(msg).__name__)]


def _stream_event(msg: StreamEvent) -> list[sig.Signal]:
    if msg.parent_tool_use_id:  # a subagent's stream: not the turn's own text
        return []
    e = msg.event
    kind = e.get("type")
    if kind == "content_block_delta":  # the hot path: once per streamed delta
        delta = e.get("delta")
        if delta and delta.get("type") == "text_delta":
            return [sig.TextDelta(delta.get("text", ""))]
        return []
    if kind == "message_start":
        return [sig.MessageStart((e.get("message") or {}).get("id"))]
    if kind == "message_delta" and (e.get("delta") or {}).get("stop_reason"):
        return [sig.MessageEnd()]
    return []


def _system(msg: SystemMessage) -> list[sig.Signal]:
    return cli_system.system_signals(msg.subtype, dict(msg.data or {}))


def _assistant(msg: AssistantMessage) -> list[sig.Signal]:
    out: list[sig.Signal] = []
    if msg.model and msg.model != _SYNTHETIC and msg.parent_tool_use_id is None:
        out.append(sig.ModelReport(msg.model))
    # The CLI's own report of an API failure: the ResultMessage that follows says it as one
    # line; shown here too it would read as the agent's words, glued to text cut off before.
    # Its "Not enough messages to compact." repeats the compaction status's error, already
    # one line (docs/cli.md#bad-day); shown again it became a turn "started by itself".
    if msg.error is not None or msg.model == _SYNTHETIC and any(
            isinstance(b, TextBlock) and b.text.startswith(_SAID_ELSEWHERE)
            for b in msg.content):
        return out
    parent = msg.parent_tool_use_id
    for block in msg.content:
        if isinstance(block, TextBlock):
            out.append(sig.SubagentText(parent, block.text) if parent
                       else sig.AssistantText(block.text, msg.message_id))
        elif isinstance(block, ToolUseBlock):
            out.append(sig.ToolUse(block.id, block.name, dict(block.input or {}), parent=parent))
        elif isinstance(block, ThinkingBlock) and parent is None and block.thinking:
            out.append(sig.Thinking(block.thinking))
    return out


def _user(msg: UserMessage) -> list[sig.Signal]:
    content = msg.content if isinstance(msg.content, list) else []
    results = [b for b in content if isinstance(b, ToolResultBlock)]
    if not results:
        return _user_text(msg)
    # tool_use_result belongs to the message: it is a result's own only if it is the one
    data = getattr(msg, "tool_use_result", None) if len(results) == 1 else None
    parent = msg.parent_tool_use_id
    return [sig.ToolResult(b.tool_use_id, b.content, bool(b.is_error), data, parent=parent)
            for b in results]


def _user_text(msg: UserMessage) -> list[sig.Signal]:
    """A user message without tool results: the echo of a prompt sent from here, or a
    message the CLI injected (a background agent's notification during a turn)."""
    if msg.parent_tool_use_id:
        return []
    kind = (getattr(msg, "origin", None) or {}).get("kind")
    if kind not in (None, "human"):
        text = msg.content if isinstance(msg.content, str) else " ".join(
            b.text for b in msg.content if isinstance(b, TextBlock))
        return [sig.Injected(str(kind), text)]
    return [sig.PromptEcho(msg.uuid)] if msg.uuid else []


def _result(msg: ResultMessage) -> list[sig.Signal]:
    return [sig.TurnResult(
        subtype=msg.subtype, is_error=bool(msg.is_error), cost_usd=msg.total_cost_usd,
        usage=dict(msg.usage or {}), duration_ms=msg.duration_ms, num_turns=msg.num_turns,
        result=msg.result, api_error_status=getattr(msg, "api_error_status", None),
        errors=tuple(map(str, getattr(msg, "errors", None) or ())),
        terminal_reason=getattr(msg, "terminal_reason", None),
        origin=(getattr(msg, "origin", None) or {}).get("kind"),
        session_id=getattr(msg, "session_id", None),
        prompts=tuple(str(u) for u in (
            [getattr(msg, "user_message_uuid", None)]
            + list(getattr(msg, "user_message_uuids", None) or [])) if u),
    )]


_TRANSLATORS: tuple[tuple[type, Any], ...] = (
    (StreamEvent, _stream_event),
    (TaskStartedMessage, cli_system.task_started),
    (TaskProgressMessage, cli_system.task_progress),
    (TaskNotificationMessage, cli_system.task_notification),
    (TaskUpdatedMessage, cli_system.task_updated),
    (SystemMessage, _system),
    (AssistantMessage, _assistant),
    (UserMessage, _user),
    (ResultMessage, _result),
    (RateLimitEvent, lambda m: [cli_system.rate_limit(m.rate_limit_info)]),
    # /clear: the result that follows carries the new conversation's id (docs/cli.md#start-fresh)
    (ConversationResetMessage, lambda m: []),
)
