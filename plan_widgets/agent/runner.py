"""Runs a session's turns in order, and routes what the CLI says to the running turn.

Prompts queue (``ask``), run one at a time (``serve``, on the session's owner task), and end
exactly once: with the CLI's result, an error, the session closing or dying. The CLI's signals
(:mod:`signals`) arrive in order from the reader task; each kind has one handler here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import model as ev
from ..model.errors import SessionError
from . import signals as sig
from . import wording
from .checklist import TASK_TOOLS, Checklist
from .context import CONTEXT_TIMEOUT, ContextUsage
from .gate import EDIT_TOOLS, is_plan_file
from .tasks import spawn
from .turn import Turn

if TYPE_CHECKING:
    from .session import Session

UNSHOWN_TOOLS = ("ExitPlanMode", "AskUserQuestion")
"""Tools shown as cards, not as tool lines."""
log = logging.getLogger("plan_widgets")


def _hook(view: Any, name: str, *args: Any) -> None:
    """Call an optional view hook (``tasks_updated``, ``files_changed``) if the view has it;
    views without it show nothing extra, and a failing hook never fails the turn."""
    fn = getattr(view, name, None)
    if fn is None:
        return
    try:
        fn(*args)
    except Exception:
        log.exception("the turn view's %s failed", name)


class Runner:
    """The queue of one session's turns, and the turn that runs now."""

    def __init__(self, session: Session) -> None:
        self.s = session
        self.queue: asyncio.Queue[Turn | None] = asyncio.Queue()
        self.queued: list[Turn] = []
        """Turns asked for that have not started, oldest first."""
        self.turn: Turn | None = None
        """The turn running now."""
        self.count = 0
        self.context: ContextUsage | None = None
        """How full the context window was after the last turn (None before one ended)."""
        self._checklist: Checklist | None = None
        self._measuring: asyncio.Task[Any] | None = None
        self.files_turn: tuple[int, list[str]] | None = None
        """The latest turn that changed files, and its files (the control bar's Rewind)."""

    # -- the queue ---------------------------------------------------------------------------
    def enqueue(self, turn: Turn) -> None:
        self.queued.append(turn)
        self.queue.put_nowait(turn)

    def withdraw(self, turn: Turn, why: str) -> bool:
        if turn not in self.queued:
            return False
        self.queued.remove(turn)
        turn.finish(why)
        return True

    def drop_queued(self, reason: str, shown: str | None = None) -> None:
        """Prompts still queued never run: each ends with ``reason``."""
        for t in list(self.queued):
            t.finish(reason)
            t.view.error(shown or wording.not_run(reason))
        self.queued.clear()

    def stop(self) -> None:
        """No more turns: :meth:`serve` returns after the running one."""
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(None)

    async def serve(self) -> None:
        """Run queued turns in order until the session closes or dies."""
        while True:
            turn = await self.queue.get()
            if turn is None or self.s.dead:
                return
            if not turn.done:
                await self._run(turn)

    # -- one turn ----------------------------------------------------------------------------
    async def _run(self, turn: Turn) -> None:
        s = self.s
        self.turn = turn
        if turn in self.queued:
            self.queued.remove(turn)
        self.count += 1
        turn.number = self.count
        turn.started_at = time.monotonic()
        turn.message_id = str(uuid.uuid4())
        s.emit(ev.TurnStarted(turn=turn.number, prompt=turn.prompt, plan=turn.plan,
                              message_id=turn.message_id))
        try:
            await self._send(turn)
            while not turn.done and not s.dead and not s.closed:
                await s.next_change()
            if not turn.done and s.closed:
                self.end(turn, None, wording.CLOSED_DURING_TURN)
        except SessionError as e:
            self.end(turn, None, str(e))
        finally:
            self.turn = None
            s.notify()
        # in the background: the CLI's first answer can take a second (notes m13, section 5),
        # and neither the next turn nor closing the session waits for a meter
        if self._measuring is not None:
            self._measuring.cancel()
        self._measuring = spawn(self.measure_context(turn.number))

    async def measure_context(self, number: int) -> ContextUsage | None:
        """Read how full the context is (bounded; a failure only leaves the meter as it was)."""
        s = self.s
        client = s.client
        if client is None or s.dead or s.closed or not hasattr(client, "get_context_usage"):
            return self.context
        try:
            data = await asyncio.wait_for(client.get_context_usage(), CONTEXT_TIMEOUT)
            self.context = ContextUsage.from_cli(dict(data), number)
        except Exception as e:  # noqa: BLE001 - a meter must never fail the session
            log.debug("context usage after turn %s: %r", number, e)
            return self.context
        s.notify()
        return self.context

    async def _send(self, turn: Turn) -> None:
        s = self.s
        if turn.plan and s.state.mode != "plan":
            await s.modes.set_mode("plan", "user")
            if s.state.refused:
                raise SessionError(wording.plan_refused_no_send(s.state.refused))
        assert s.client is not None
        await s.control(s.client.query(turn.prompt, s.session_id, turn.message_id), "query")

    def end(self, turn: Turn, result: sig.TurnResult | None, error: str | None) -> None:
        """End ``turn`` once: log it, show its closing line, and wake whoever awaits it."""
        if turn.done:
            return
        s = self.s
        r = result or sig.TurnResult(subtype="error" if error else "success")
        dur = r.duration_ms
        if dur is None and turn.started_at is not None:
            dur = int((time.monotonic() - turn.started_at) * 1000)
        before = s.state.cost_usd
        s.emit(ev.TurnEnded(
            turn=turn.number, result=r.subtype, is_error=error is not None, cost_usd=r.cost_usd,
            input_tokens=r.input_tokens, output_tokens=r.output_tokens, duration_ms=dur,
            message=error, files=list(turn.files)))
        total = s.state.cost_usd  # the CLI reports a running total: show this turn's share
        turn_cost = max(total - before, 0.0) if r.cost_usd is not None else None
        turn.result = {"subtype": r.subtype, "cost_usd": r.cost_usd,
                       "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                       "duration_ms": dur, "num_turns": r.num_turns}
        if error:
            turn.view.error(error)
        turn.view.finished(wording.turn_summary(dur, r.input_tokens, r.output_tokens,
                                                turn_cost, total), error is None)
        if turn.files and s.options.checkpointing:
            self.files_turn = (turn.number, list(turn.files))
            _hook(turn.view, "files_changed", turn)
        turn.finish(error)

    # -- signals from the CLI ----------------------------------------------------------------
    def on_signal(self, signal: sig.Signal) -> None:
        """React to one signal from the CLI (the reader task calls this, in order)."""
        handler = _HANDLERS.get(type(signal))
        if handler is not None:
            handler(self, signal)

    def _on_message_start(self, m: sig.MessageStart) -> None:
        if self.turn is not None:
            self.turn.message_started(m.message_id)

    def _on_text_delta(self, m: sig.TextDelta) -> None:
        if self.turn is not None:
            self.turn.add_text(m.text)

    def _on_assistant_text(self, m: sig.AssistantText) -> None:
        if self.turn is not None and not self.turn.was_streamed(m.message_id):
            self.turn.add_text(m.text)

    def _on_tool_use(self, m: sig.ToolUse) -> None:
        if m.name == "EnterPlanMode":
            self.s.marker(wording.AGENT_ENTERED_PLAN)
        if self.turn is not None:
            self.turn.tool_called(m.id, m.name)
            self.turn.tool_inputs[m.id] = m.input
            if m.name not in UNSHOWN_TOOLS:
                self.turn.view.tool_started(m.id, m.name, m.input)

    def _on_tool_result(self, m: sig.ToolResult) -> None:
        turn = self.turn
        if turn is not None and turn.tool_name(m.tool_use_id) not in (None, *UNSHOWN_TOOLS):
            turn.view.tool_finished(m.tool_use_id, m.content, m.is_error)
        if turn is None or m.is_error:
            return
        name = turn.tool_name(m.tool_use_id)
        tool_input = turn.tool_inputs.get(m.tool_use_id, {})
        if name in EDIT_TOOLS:
            path = tool_input.get("file_path") or tool_input.get("notebook_path")
            if isinstance(path, str) and path and not is_plan_file(path, self.s.cli_env):
                turn.changed_file(path)
        elif name in TASK_TOOLS:
            self._tasks(turn, name, tool_input, m)

    def _tasks(self, turn: Turn, name: str, tool_input: dict[str, Any],
               m: sig.ToolResult) -> None:
        """A task tool's result: the checklist follows it (see :mod:`checklist`)."""
        if self._checklist is None:  # a resumed session starts from its logged list
            self._checklist = Checklist(self.s.state.tasks)
        if self._checklist.apply(name, tool_input, m.data, m.is_error):
            tasks = self._checklist.as_dicts()
            self.s.emit(ev.TasksUpdated(turn=turn.number, tasks=tasks))
            _hook(turn.view, "tasks_updated", tasks)

    def _on_model(self, m: sig.ModelReport) -> None:
        self.s.modes.saw_model(m.model)

    def _on_mode(self, m: sig.ModeReport) -> None:
        if not m.initial or m.mode != self.s.state.mode:
            self.s.modes.saw_mode(m.mode)

    def _on_result(self, m: sig.TurnResult) -> None:
        if self.turn is not None:
            self.end(self.turn, m, wording.result_error(m) if m.is_error else None)


_HANDLERS: dict[type, Callable[[Runner, Any], None]] = {
    sig.MessageStart: Runner._on_message_start,
    sig.TextDelta: Runner._on_text_delta,
    sig.AssistantText: Runner._on_assistant_text,
    sig.ToolUse: Runner._on_tool_use,
    sig.ToolResult: Runner._on_tool_result,
    sig.ModelReport: Runner._on_model,
    sig.ModeReport: Runner._on_mode,
    sig.TurnResult: Runner._on_result,
}
