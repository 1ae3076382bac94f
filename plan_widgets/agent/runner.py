"""Runs a session's turns in order, and routes what the CLI says to the turn it belongs to.

Prompts queue (``ask``), run one at a time (``serve``, on the session's owner task), and end
exactly once: with their own result, an error, the session closing or dying. The CLI's signals
(:mod:`signals`) arrive in order from the reader task, also between cells; each kind has one
handler here.

Whose turn is it? The CLI runs one turn at a time, but not only ours: when a background agent
ends while nothing runs, it starts a turn by itself (docs/conversation.md). A prompt sent from
here is echoed back before its turn's first message (:class:`signals.PromptEcho`); content
that comes with no echo before it belongs to a *self-started* turn, which gets a turn of its
own (logged, counted, shown below the newest cell). A result ends the turn whose prompt it
names (``user_message_uuids``), never another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from .. import model as ev
from ..model.errors import SessionError
from . import health, wording
from . import signals as sig
from .agents import AGENT_TOOLS, Agents
from .checklist import TASK_TOOLS, Checklist
from .commands import names, unknown_command
from .gate import EDIT_TOOLS, is_plan_file
from .meter import Meter
from .modes import Modes
from .ports import SessionPort
from .turn import NullView, Turn, call_hook

UNSHOWN_TOOLS = ("ExitPlanMode", "AskUserQuestion")
"""Tools shown as cards, not as tool lines."""
log = logging.getLogger("plan_widgets")


class Runner:
    """The queue of one session's turns, and the turn that runs now."""

    def __init__(self, session: SessionPort, modes: Modes) -> None:
        self.s = session
        self.modes = modes
        """Mode tracking: a plan turn asks for plan mode; the CLI's reports go there."""
        self.queue: asyncio.Queue[Turn | None] = asyncio.Queue()
        self.queued: list[Turn] = []
        """Turns asked for that have not started, oldest first."""
        self.turn: Turn | None = None
        """The user's turn running now (its prompt sent)."""
        self.cli_turn: Turn | None = None
        """The turn whose messages arrive now: the user's (once its prompt was echoed), or
        one the CLI started by itself; None between the CLI's turns."""
        self._merged: Turn | None = None
        """A self-started turn the user's prompt was taken into (ends with the same result)."""
        self.agents = Agents(session.emit, lambda: session.state)
        self.health = health.Health(self)  # retries, fallbacks, compaction, MCP servers, ...
        self.count = 0
        self.meter = Meter(session)
        """How full the context window is (read after each turn)."""
        self._checklist: Checklist | None = None
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
            await self._clear_to_send(turn)
            if not turn.done and not self.s.dead and not self.s.closed:
                await self._run(turn)

    async def _clear_to_send(self, turn: Turn) -> None:
        """A prompt waits while the CLI runs a turn of its own, or a card (a background
        agent's, between cells) waits for the user: what the cell says must be true."""
        s = self.s
        said = False
        while not turn.done and not s.dead and not s.closed and (
                self.cli_turn is not None or s.pending is not None):
            if not said:
                said = True
                turn.view.marker(wording.WAITING_BEHIND_SELF_STARTED if self.cli_turn
                                 is not None else wording.WAITING_BEHIND_DECISION)
            await s.next_change(0.25)

    # -- one turn ----------------------------------------------------------------------------
    async def _run(self, turn: Turn) -> None:
        s = self.s
        self.turn = turn
        if turn in self.queued:
            self.queued.remove(turn)
        self.count += turn.counted
        turn.number = self.count
        turn.started_at = time.monotonic()
        turn.message_id = str(uuid.uuid4())
        if turn.counted:
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
            if self.cli_turn is turn:
                self.cli_turn = None
            s.notify()
        self.meter.soon(turn.number)

    async def _send(self, turn: Turn) -> None:
        s = self.s
        await self.modes.scope.before_send(turn)  # a mode for one plan's work: over first
        if turn.plan and s.state.mode != "plan":
            await self.modes.set_mode("plan", "user")
            if s.state.refused:
                raise SessionError(wording.plan_refused_no_send(s.state.refused))
        assert s.client is not None
        unknown = None if turn.verbatim else unknown_command(turn.prompt, names(s))
        if unknown is not None:  # the CLI would answer "Unknown skill": say why and the way out
            raise SessionError(wording.no_such_command(unknown))
        verbatim = {"verbatim": True} if turn.verbatim else {}
        await s.control(s.client.query(turn.prompt, s.session_id, turn.message_id, **verbatim),
                        "query")

    def end(self, turn: Turn, result: sig.TurnResult | None, error: str | None) -> None:
        """End ``turn`` once: log it, show its closing line, and wake whoever awaits it."""
        if turn.done:
            return
        s = self.s
        r = result or sig.TurnResult(subtype="error" if error else "success")
        handed = turn.handed_over and error == wording.INTERRUPTED
        error = None if handed else error  # start fresh: the CLI stops it, on purpose
        dur = r.duration_ms
        if dur is None and turn.started_at is not None:
            dur = int((time.monotonic() - turn.started_at) * 1000)
        turn.message_ended()  # (an interrupted message's thinking is logged)
        before = s.state.cost_usd
        if turn.counted:
            s.emit(ev.TurnEnded(
                turn=turn.number, result=r.subtype, is_error=error is not None,
                cost_usd=r.cost_usd, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
                duration_ms=dur, message=error or (wording.HANDED_OVER if handed else None),
                files=list(turn.files), origin=r.origin if turn.origin != "user" else None))
        total = s.state.cost_usd  # the CLI reports a running total: show this turn's share
        turn_cost = max(total - before, 0.0) if r.cost_usd is not None else None
        turn.result = {"subtype": r.subtype, "cost_usd": r.cost_usd,
                       "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                       "duration_ms": dur, "num_turns": r.num_turns, "session_id": r.session_id}
        self.health.ended()
        if error:
            turn.view.error(error)
        self.modes.scope.turn_ending(turn)  # a mode for one plan's work: back when it ends
        summary = wording.turn_summary(dur, r.input_tokens, r.output_tokens, turn_cost, total,
                                       turn.waited())
        turn.view.finished(f"{wording.HANDED_OVER} · {summary}" if handed else summary,
                           error is None)
        if turn.files and s.options.checkpointing:
            self.files_turn = (turn.number, list(turn.files))
            call_hook(turn.view, "files_changed", turn)
        turn.finish(error)
        if turn.origin != "user":  # a cell's turn goes static through its cell
            call_hook(turn.view, "turn_done")

    def marker(self, text: str) -> None:
        """Show a marker in the turn whose messages arrive now (nowhere, between turns)."""
        turn = self.cli_turn or self.turn
        if turn is not None:
            turn.view.marker(text)

    # -- whose turn ------------------------------------------------------------------------
    def _target(self) -> Turn:
        """The turn the CLI's content belongs to; content with no turn open starts a turn of
        the CLI's own (no prompt of ours was echoed before it)."""
        if self.cli_turn is None:
            self.cli_turn = self._self_started()
        return self.cli_turn

    def _self_started(self) -> Turn:
        s = self.s
        turn = Turn(s, self.agents.title(), NullView(), origin="agent")
        turn.view = s.between_cells_view(turn.prompt)
        self.count += 1
        turn.number = self.count
        turn.started_at = time.monotonic()
        s.emit(ev.TurnStarted(turn=turn.number, prompt=turn.prompt, origin="agent"))
        return turn

    def decision_view(self, d: Any) -> tuple[Any, bool]:
        """Where a decision's card goes, and whether that view is the card's own: the turn
        of the agent that asks while it is live, else the turn running now, else (between
        cells: a background agent asks after its cell ended) a view of its own."""
        for turn in (self.agents.home_of(d.agent_id), self.cli_turn, self.turn):
            if turn is not None and not turn.done:
                turn.decisions.append(d)  # its wait is the person's time, not the agent's
                return turn.view, False
        return self.s.between_cells_view(wording.between_cells_card(d.agent)), True

    def _owner(self, parent: str | None) -> Turn | None:
        """The turn that shows a subagent's output (its Agent line), or None after saying
        that the parent is unknown."""
        home = self.agents.home(parent)
        if home is None and parent:
            self._plain_line("unknown_parent", wording.unknown_parent(parent))
        return home

    def _plain_line(self, kind: str, text: str) -> None:
        """Something the CLI said that fits no turn: logged, and shown as a plain line."""
        self.s.emit(ev.ErrorEvent(kind=kind, message=text))
        turn = self.cli_turn or self.turn
        view = turn.view if turn is not None else self.s.between_cells_view(text)
        view.marker(text)

    # -- signals from the CLI ----------------------------------------------------------------
    def on_signal(self, signal: sig.Signal) -> None:
        """React to one signal from the CLI (the reader task calls this, in order)."""
        handler = _HANDLERS.get(type(signal))
        if handler is not None:
            handler(self, signal)

    def _on_echo(self, m: sig.PromptEcho) -> None:
        turn = self.turn
        if turn is None or turn.done or m.uuid != turn.message_id:
            return  # another prompt's echo (a resumed transcript's, an interrupt's note)
        if self.cli_turn is not None and self.cli_turn is not turn:
            self._merged = self.cli_turn  # taken into the CLI's own turn: both end together
        self.cli_turn = turn

    def _on_injected(self, m: sig.Injected) -> None:
        if self.cli_turn is not None:
            self.cli_turn.view.marker(wording.injected(m.kind))

    def _on_message_start(self, m: sig.MessageStart) -> None:
        self.health.resumed()  # the stream is back: a retry line becomes a quiet one
        self._target().message_started(m.message_id)

    def _on_text_delta(self, m: sig.TextDelta) -> None:
        self._target().add_text(m.text)

    def _on_assistant_text(self, m: sig.AssistantText) -> None:
        self._target().assistant_text(m.text, m.message_id)

    def _on_thinking(self, m: sig.Thinking) -> None:
        turn = self._target()
        turn.hold(ev.Thought(turn=turn.number, text=m.text))  # (logged once complete)
        if self.s.options.show_thinking:
            call_hook(turn.view, "thinking", m.text)

    def _on_subagent_text(self, m: sig.SubagentText) -> None:
        home = self._owner(m.parent)
        if home is not None:
            call_hook(home.view, "subagent_text", m.parent, m.text)

    def _on_tool_use(self, m: sig.ToolUse) -> None:
        if m.parent is not None:
            home = self._owner(m.parent)
            if home is not None:
                home.tool_called(m.id, m.name)
                call_hook(home.view, "subagent_tool_started", m.parent, m.id, m.name, m.input)
            return
        if m.name == "EnterPlanMode":
            self.s.marker(wording.AGENT_ENTERED_PLAN)
        turn = self._target()
        turn.tool_called(m.id, m.name)
        turn.tool_inputs[m.id] = m.input
        if m.name in AGENT_TOOLS:
            self.agents.launched(turn, m.id)
        if m.name not in UNSHOWN_TOOLS:
            turn.view.tool_started(m.id, m.name, m.input)

    def _on_tool_result(self, m: sig.ToolResult) -> None:
        if m.parent is not None:
            home = self._owner(m.parent)
            if home is not None:
                call_hook(home.view, "subagent_tool_finished", m.parent, m.tool_use_id, m.content,
                          m.is_error)
            return
        turn = self._target()
        name = turn.tool_name(m.tool_use_id)
        if name not in (None, *UNSHOWN_TOOLS):
            turn.view.tool_finished(m.tool_use_id, m.content, m.is_error)
        if m.is_error:
            return
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
            call_hook(turn.view, "tasks_updated", tasks)

    def _on_agent_start(self, m: sig.AgentStart) -> None:
        self.agents.started(m, self.count)

    def _on_agent_step(self, m: sig.AgentStep) -> None:
        if not self.agents.stepped(m):
            self._plain_line("unknown_agent", wording.unknown_agent(m.agent_id, "progress"))

    def _on_agent_end(self, m: sig.AgentEnd) -> None:
        if not self.agents.ended(m):
            self._plain_line("unknown_agent", wording.unknown_agent(m.agent_id, "the end"))

    def _on_model(self, m: sig.ModelReport) -> None:
        self.modes.saw_model(m.model)

    def _on_mode(self, m: sig.ModeReport) -> None:
        if not m.initial or m.mode != self.s.state.mode:
            self.modes.saw_mode(m.mode)

    def _on_result(self, m: sig.TurnResult) -> None:
        """End the turn(s) this result belongs to: the user's only if it names its prompt."""
        user, own = self.turn, self.cli_turn
        ended = False
        error = wording.result_error(m) if m.is_error else None
        if user is not None and not user.done and (
                user.message_id in m.prompts
                or (not m.prompts and not m.self_started and own is user)):
            self.end(user, m, error)
            ended = True
        for turn in (own, self._merged):
            if turn is not None and turn is not user and not turn.done:
                self.end(turn, None if ended else m, error)
                ended = True
        if not ended and m.self_started:  # a turn of its own that said nothing here
            self.end(self._self_started(), m, error)
            ended = True
        # the user's turn, its prompt echoed, goes on until its own result
        self.cli_turn = user if user is not None and own is user and not user.done else None
        self._merged = None
        if not ended:
            self._plain_line("unmatched_result", wording.unmatched_result(m.origin))
        self.s.notify()  # no turn of the CLI's runs now: the bar says so


_HANDLERS: dict[type, Callable[[Runner, Any], None]] = {
    sig.MessageStart: Runner._on_message_start,
    sig.TextDelta: Runner._on_text_delta,
    sig.AssistantText: Runner._on_assistant_text,
    sig.Thinking: Runner._on_thinking,
    sig.SubagentText: Runner._on_subagent_text,
    sig.ToolUse: Runner._on_tool_use,
    sig.ToolResult: Runner._on_tool_result,
    sig.PromptEcho: Runner._on_echo,
    sig.Injected: Runner._on_injected,
    sig.AgentStart: Runner._on_agent_start,
    sig.AgentStep: Runner._on_agent_step,
    sig.AgentEnd: Runner._on_agent_end,
    sig.ModelReport: Runner._on_model,
    sig.ModeReport: Runner._on_mode,
    sig.TurnResult: Runner._on_result,
    **health.HANDLERS,
}
