"""An in-process stand-in for the Claude Code CLI behind the session's seam (``AgentClient``).

It plays the CLI's part of the protocol that the session relies on, as measured on the real CLI
(docs/cli.md#plan-mode): a mode change is confirmed by a status report; an interrupt withdraws
a pending permission request (its callback task is cancelled) and ends the turn with
``error_during_execution``; a turn ends with a result. What the "model" does on a prompt is a
test's own coroutine (``on_query``), written with :meth:`FakeClient.say`,
:meth:`FakeClient.ask` and :meth:`FakeClient.end_turn`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from plan_widgets.agent import signals as sig
from plan_widgets.agent.gate import EDIT_TOOLS
from plan_widgets.agent.seam import Allow, Answer, ClientConfig, Deny, PermissionRequest

Script = Callable[["FakeClient", str], Awaitable[None]]


class FakeClient:
    """One fake CLI. ``FakeClient.factory(script)`` is what a Session takes as ``client=``."""

    instances: list[FakeClient] = []

    def __init__(self, config: ClientConfig, script: Script | None = None, *,
                 refuse_modes: tuple[str, ...] = (), fail_connect: BaseException | None = None,
                 model: str = "fake-model") -> None:
        self.config = config
        self.script = script or _say_hello
        self.refuse_modes = refuse_modes
        self.fail_connect = fail_connect
        self.mode = config.mode
        self.model = config.model or model
        self.queries: list[str] = []
        self.message_ids: list[str | None] = []
        self.context_usage: dict[str, Any] | BaseException = {
            "totalTokens": 12_000, "maxTokens": 100_000, "percentage": 12, "model": self.model,
            "categories": [{"name": "System tools", "tokens": 9_000, "kind": "used"},
                           {"name": "Messages", "tokens": 3_000, "kind": "used"},
                           {"name": "Free space", "tokens": 88_000, "kind": "free"}]}
        """What get_context_usage answers (an exception is raised instead)."""
        self.rewinds: list[tuple[str, bool]] = []
        self.dry_run: dict[str, Any] | BaseException | None = None
        """What a dry run answers (None: the files written since the checkpoint)."""
        self._written: list[tuple[str, str]] = []  # (message id, path) of each Write/Edit
        self.answers: list[Answer] = []
        self.requests: list[PermissionRequest] = []
        self._out: asyncio.Queue[sig.Signal | BaseException | None] = asyncio.Queue()
        self._turn: asyncio.Task[None] | None = None
        self._pending: asyncio.Task[Answer] | None = None
        self.connected = False
        self.disconnected = False
        self.stopped: list[str] = []
        self._ids = 0
        FakeClient.instances.append(self)

    @classmethod
    def factory(cls, script: Script | None = None, **kw: Any) -> Callable[[ClientConfig], Any]:
        return lambda config: cls(config, script, **kw)

    # -- the AgentClient protocol ------------------------------------------------------------
    async def connect(self) -> None:
        await asyncio.sleep(0)
        if self.fail_connect is not None:
            raise self.fail_connect
        self.connected = True

    async def query(self, prompt: str, session_id: str, message_id: str | None = None,
                    verbatim: bool = False) -> None:
        self.queries.append(prompt)
        self.message_ids.append(message_id)
        self._turn = asyncio.get_running_loop().create_task(self._run(prompt, message_id))

    async def signals(self) -> AsyncIterator[sig.Signal]:
        while True:
            item = await self._out.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def interrupt(self) -> None:
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()  # control_cancel_request: the callback task is cancelled
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
            self.emit(sig.TurnResult("error_during_execution", is_error=True,
                                     prompts=self._prompt()))

    async def set_permission_mode(self, mode: str) -> None:
        if mode in self.refuse_modes:
            raise RuntimeError(f"{mode} is not allowed here")
        self._set_mode(mode)

    async def set_model(self, model: str | None) -> None:
        self.model = model or "fake-model"

    async def stop_task(self, task_id: str) -> None:
        self.stopped.append(task_id)
        self.emit(sig.AgentEnd(task_id, "stopped"))

    async def disconnect(self) -> None:
        self.disconnected = True
        if self._turn is not None:
            self._turn.cancel()
        self._out.put_nowait(None)

    async def get_context_usage(self) -> dict[str, Any]:
        await asyncio.sleep(0)
        if isinstance(self.context_usage, BaseException):
            raise self.context_usage
        return dict(self.context_usage)

    async def rewind_files(self, message_id: str, *, dry_run: bool = False) -> dict[str, Any]:
        """As the CLI: files written since prompt ``message_id`` go back (a real rewind
        raises "No file checkpoint found" for an id it never saw)."""
        self.rewinds.append((message_id, dry_run))
        if message_id not in self.message_ids:
            if dry_run:
                return {"canRewind": False, "error": "No file checkpoint found for this message."}
            raise RuntimeError("No file checkpoint found for this message.")
        if dry_run and self.dry_run is not None:
            if isinstance(self.dry_run, BaseException):
                raise self.dry_run
            return dict(self.dry_run)
        since = self.message_ids.index(message_id)
        later = set(self.message_ids[since:])
        files = list(dict.fromkeys(p for m, p in self._written if m in later))
        return {"canRewind": True, "filesChanged": files, "insertions": len(files),
                "deletions": 0} if dry_run else {"canRewind": True}

    @property
    def pid(self) -> int | None:
        return None

    # -- what a test's "model" does ----------------------------------------------------------
    def emit(self, signal: sig.Signal | BaseException | None) -> None:
        self._out.put_nowait(signal)

    def say(self, text: str) -> None:
        self._ids += 1
        self.emit(sig.MessageStart(f"msg_{self._ids}"))
        self.emit(sig.TextDelta(text))
        self.emit(sig.AssistantText(text, f"msg_{self._ids}"))
        self.emit(sig.MessageEnd())

    async def ask(self, tool: str, tool_input: dict[str, Any]) -> Answer:
        """Call a tool that needs permission; returns the host's answer (as the CLI would
        apply it: an approved plan with a mode leaves plan mode into that mode)."""
        self._ids += 1
        tid = f"toolu_{self._ids}"
        self.emit(sig.ToolUse(tid, tool, tool_input))
        if self._runs_unasked(tool):
            answer: Answer = Allow()
        else:
            request = PermissionRequest(tool, tool_input, tool_use_id=tid)
            self.requests.append(request)
            self._pending = asyncio.get_running_loop().create_task(
                self.config.can_use_tool(request))
            answer = await self._pending
        self.answers.append(answer)
        if isinstance(answer, Allow) and answer.mode is not None:
            self._set_mode(answer.mode)
        if (isinstance(answer, Allow) and tool in EDIT_TOOLS and tool_input.get("file_path")
                and "/.claude/plans/" not in str(tool_input["file_path"])):
            self._written.append((self.message_ids[-1] or "", str(tool_input["file_path"])))
        self.emit(sig.ToolResult(tid, "ok" if isinstance(answer, Allow) else
                                 getattr(answer, "message", ""), isinstance(answer, Deny)))
        return answer

    def tool(self, tool: str, tool_input: dict[str, Any], content: Any = "ok",
             data: Any = None, is_error: bool = False) -> str:
        """A tool that runs without asking (as the task tools do): its call, then its result
        with ``data`` (the CLI's structured ``tool_use_result``). Returns the tool use id."""
        self._ids += 1
        tid = f"toolu_{self._ids}"
        self.emit(sig.ToolUse(tid, tool, tool_input))
        self.emit(sig.ToolResult(tid, content, is_error, data))
        return tid

    def _runs_unasked(self, tool: str) -> bool:
        """As the CLI: acceptEdits runs edits without asking, bypassPermissions everything
        but the plan and questions."""
        if tool in ("ExitPlanMode", "AskUserQuestion"):
            return False
        return self.mode == "bypassPermissions" or (
            self.mode == "acceptEdits" and tool in EDIT_TOOLS)

    def end_turn(self, cost: float = 0.01) -> None:
        self.emit(sig.TurnResult("success", cost_usd=cost, usage={"input_tokens": 10,
                                                                  "output_tokens": 5},
                                 prompts=self._prompt()))

    def _prompt(self) -> tuple[str, ...]:
        last = self.message_ids[-1] if self.message_ids else None
        return (last,) if last else ()

    def self_started(self, text: str, cost: float = 0.02) -> None:
        """A turn the CLI starts by itself (a background agent's notification): its reply,
        then a result whose origin says so and that names no prompt of ours."""
        self.say(text)
        self.emit(sig.TurnResult("success", cost_usd=cost, origin="task-notification",
                                 usage={"input_tokens": 7, "output_tokens": 3}))

    def die(self, error: BaseException | None = None) -> None:
        """The CLI exits (the message stream ends, or fails with ``error``)."""
        self.emit(error)

    def _set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self.emit(sig.ModeReport(mode))

    async def _run(self, prompt: str, message_id: str | None) -> None:
        if message_id:
            self.emit(sig.PromptEcho(message_id))  # as the CLI replays a prompt it took in
        self.emit(sig.ModelReport(self.model))
        self.emit(sig.ModeReport(self.mode, initial=True))
        await self.script(self, prompt)


async def _say_hello(client: FakeClient, prompt: str) -> None:
    client.say(f"hello: {prompt}")
    client.end_turn()
