"""A long-lived Claude Code session: one owner task on the kernel's loop, fed by a queue.

The owner task connects, uses and disconnects one ``ClaudeSDKClient`` (the SDK's task group
must be entered and left by one task). Turns queue in order. Messages from the CLI are
translated into typed events (appended to the durable log and folded into state) and into
calls on the turn's view.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import re
import sys
import time
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, get_args

from .. import model as ev
from ..model.errors import OptionError, SessionError
from ..model.options import ALL_MODES, SessionOptions
from ..store import EventLog, default_log_dir, find_session_log
from .credentials import NO_CREDENTIALS, has_credentials
from .decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from .gate import Gate
from .procgroup import own_process_group
from .tasks import spawn

CONTROL_TIMEOUT = 15.0
_QUIET = logging.NullHandler()



class TurnView(Protocol):
    """Where one turn's output goes (widgets in a kernel, text in a terminal)."""

    def text(self, delta: str) -> None: ...
    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None: ...
    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None: ...
    def decision(self, decision: Decision) -> None: ...
    def marker(self, text: str) -> None: ...
    def error(self, message: str) -> None: ...
    def finished(self, summary: str, ok: bool) -> None: ...


class NullView:
    """A view that shows nothing (plain Python use)."""

    def text(self, delta: str) -> None:
        pass

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        pass

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        pass

    def decision(self, decision: Decision) -> None:
        pass

    def marker(self, text: str) -> None:
        pass

    def error(self, message: str) -> None:
        pass

    def finished(self, summary: str, ok: bool) -> None:
        pass


class Turn:
    """One prompt and the agent's work on it. ``await turn`` waits for its end."""

    def __init__(self, session: Session, prompt: str, view: TurnView, plan: bool = False) -> None:
        self.session = session
        self.prompt = prompt
        self.view = view
        self.plan = plan
        self.number = 0
        self._text: list[str] = []  # joined on demand: `text += delta` would copy it each time
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self.started_at: float | None = None
        self._done: asyncio.Future[Turn] = asyncio.get_running_loop().create_future()
        self._streamed: set[str] = set()
        self._tools: dict[str, str] = {}

    @property
    def text(self) -> str:
        """The agent's text in this turn so far."""
        if len(self._text) > 1:
            self._text[:] = ["".join(self._text)]
        return self._text[0] if self._text else ""

    @property
    def done(self) -> bool:
        """True once the turn has ended (successfully or not)."""
        return self._done.done()

    @property
    def ok(self) -> bool:
        """True if the turn ended without error."""
        return self.done and self.error is None

    def __await__(self) -> Any:
        return asyncio.shield(self._done).__await__()

    def add_done_callback(self, fn: Callable[[Turn], None]) -> None:
        """Call ``fn(turn)`` once the turn has ended (at once if it has)."""
        self._done.add_done_callback(lambda _f: fn(self))

    async def wait(self, timeout: float | None = None) -> Turn:
        """Wait for the turn to end; raises TimeoutError after ``timeout`` seconds."""
        return await asyncio.wait_for(asyncio.shield(self._done), timeout)

    def _finish(self, error: str | None = None) -> None:
        if self._done.done():
            return
        self.error = error
        self._done.set_result(self)

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<Turn {self.number} of {self.session.name!r} {state}>"


class Session:
    """A Claude Code session. Make one with :func:`plan_widgets.session`."""

    def __init__(self, options: SessionOptions) -> None:
        self.options = options.validated()
        self.name = self.options.name
        self.session_id: str = self.options.resume or str(uuid.uuid4())
        self.events: list[ev.Event] = []
        self.state: ev.SessionState = ev.fold([])
        self.decisions: list[Decision] = []
        self.dead: str | None = None
        self.closed = False
        self._queue: asyncio.Queue[Turn | None] = asyncio.Queue()
        self._turn: Turn | None = None
        self._queued: list[Turn] = []
        self._client: Any = None
        self._connected = asyncio.Event()
        self._pulse = asyncio.Event()
        self._listeners: list[Callable[[Session], None]] = []
        self._stderr: deque[str] = deque(maxlen=40)
        self._cli_env: dict[str, str] = {}
        self._scripted: Any = None
        self._gate_plan = self.options.plan
        self._model_target: str | None = self.options.model
        self._turn_count = 0
        self._requested_source: str | None = None
        self._why_model: str | None = None
        self._log: EventLog | None = None
        self._resume_source: Path | None = None
        self._resume_mode: str | None = None
        if self.options.resume:
            self._load_resumed()
        # The SDK's first import (about 1.3 s, mostly its mcp dependency) runs in a thread from
        # here on, so the cell's widgets are built and the scripted model starts meanwhile
        # (docs/benchmarks.md, figure 3). Never at %load_ext: it would slow the user's cells.
        self._sdk_import: asyncio.Future[Any] | None = None
        if "claude_agent_sdk" not in sys.modules:
            self._sdk_import = asyncio.get_running_loop().run_in_executor(
                None, importlib.import_module, "claude_agent_sdk")
        self._owner = asyncio.get_running_loop().create_task(
            self._main(), name=f"claude:{self.name}"
        )

    # -- public API ----------------------------------------------------------------------
    @property
    def model(self) -> str | None:
        """The model the CLI last reported (effective, not requested)."""
        return self.state.model

    @property
    def mode(self) -> str | None:
        """The permission mode the CLI last confirmed (effective, not requested)."""
        return self.state.mode

    @property
    def plan_mode(self) -> bool:
        """Whether the CLI has confirmed plan mode."""
        return self.state.mode == "plan"

    @property
    def pending(self) -> Decision | None:
        """The decision awaiting the user, or None."""
        for d in self.decisions:
            if not d.done:
                return d
        return None

    @property
    def plans(self) -> list[Any]:
        """Approved plans, oldest first (from the event log, so they survive restarts)."""
        return list(self.state.plans)

    @property
    def connected(self) -> bool:
        """True once the CLI has answered ``initialize`` (stays true after it ends)."""
        return self._connected.is_set()

    @property
    def log_path(self) -> Path | None:
        """The session's event log file (None before it is known)."""
        return self._log.path if self._log is not None else None

    @property
    def plan_in_force(self) -> bool:
        """Whether the gate treats plan mode as in force (confirmed, or requested and not yet
        left): tools are refused, and ``--mode`` only names where approval leads."""
        return self._plan_in_force()

    def open_decisions(self) -> list[Decision]:
        """The decisions still waiting, oldest first."""
        return list(self._open_decisions())

    def withdraw(self, turn: Turn, why: str = "interrupted before it started") -> bool:
        """Take back a prompt that is still queued: it never runs. False if it has started."""
        if turn not in self._queued:
            return False
        self._queued.remove(turn)
        turn._finish(why)
        self._changed()
        return True

    def update_options(self, **changes: Any) -> None:
        """Change options that apply from now on without a restart (``approval_timeout``,
        ``model``, ``plan_model``, ``mode`` as the resting mode); None values are ignored."""
        self.options = self.options.with_(**changes)
        self._changed()

    @property
    def busy(self) -> bool:
        """True while a turn runs or waits in the queue."""
        return self._turn is not None or bool(self._queued)

    @property
    def status(self) -> str:
        """idle, starting, working, waiting (for you), dead or closed."""
        if self.closed:
            return "closed"
        if self.dead:
            return "dead"
        if self.pending is not None:
            return "waiting"
        if self.busy:
            return "working"
        if not self._connected.is_set():
            return "starting"
        return "idle"

    def ask(self, prompt: str, *, view: TurnView | None = None, plan: bool = False) -> Turn:
        """Queue ``prompt`` as the next turn and return it; ``await`` it for the end."""
        if not prompt or not prompt.strip():
            raise OptionError("the prompt is empty: write what Claude should do")
        self._check_alive()
        turn = Turn(self, prompt, view or NullView(), plan=plan)
        self._queued.append(turn)
        self._queue.put_nowait(turn)
        self._changed()
        return turn

    async def wait(self, timeout: float | None = 60) -> str:
        """Wait until the session is idle or waits for the user; returns :attr:`status`."""
        async def _settle() -> None:
            while self.status in ("working", "starting"):
                await self._next_pulse()

        await asyncio.wait_for(_settle(), timeout)
        return self.status

    async def wait_for_decision(self, timeout: float | None = 60) -> Decision:
        """Wait for the next decision awaiting the user (returns a pending one at once)."""
        async def _next() -> Decision:
            while True:
                d = self.pending
                if d is not None:
                    return d
                if self.dead or self.closed:
                    raise SessionError(f"session {self.name!r} ended: {self.dead or 'closed'}")
                if not self.busy and self._connected.is_set():
                    raise SessionError("no turn is running, so no decision will come")
                await self._next_pulse()

        return await asyncio.wait_for(_next(), timeout)

    async def settle(self, turn: Turn, timeout: float | None = None) -> None:
        """Wait until ``turn`` ends, or any decision waits for the user."""
        async def _s() -> None:
            # The tick matters: ipykernel 7.4 delivers a kernel interrupt to an awaiting cell
            # only when its loop next wakes (measured: a bare 30 s sleep ignored it for 28 s).
            while not turn.done and self.pending is None:
                await self._next_pulse(tick=0.25)

        await asyncio.wait_for(_s(), timeout)

    async def set_plan_mode(self, on: bool) -> None:
        """Enter or leave plan mode live (the CLI confirms; see :attr:`mode`)."""
        await self.set_mode("plan" if on else self.options.mode, source="user")

    async def set_mode(self, mode: str, *, source: str = "user") -> None:
        """Request a permission mode; the marker shows it pending until the CLI confirms."""
        self._check_alive()
        if mode not in ALL_MODES:
            raise OptionError(f"unknown mode {mode!r}: choose one of {', '.join(ALL_MODES)}")
        if source not in get_args(ev.ModeSource):
            raise OptionError(f"unknown source {source!r}: one of {get_args(ev.ModeSource)}")
        self._gate_plan = mode == "plan"
        resting = self.options.mode
        if mode != "plan" and resting != mode and source == "user":
            self.options = self.options.with_(mode=mode)
        if self.state.mode == mode and self.state.requested_mode is None:
            return
        self._requested_source = source
        self._emit(ev.PlanMode(mode=mode, state="requested", source=source))  # type: ignore[arg-type]
        if not self._connected.is_set():
            return  # applied once connected
        await self._apply_mode(mode, source)
        if self.state.refused and self.options.mode == mode != resting:
            self.options = self.options.with_(mode=resting)  # the CLI said no: keep the old

    async def set_model(self, model: str | None, *, why: str = "requested") -> None:
        """Switch the model for the next request (the marker follows what the CLI reports)."""
        self._check_alive()
        self._model_target = model
        self._why_model = why
        if self._connected.is_set():
            await self._control(self._client.set_model(model), f"set_model({model!r})")

    async def interrupt(self) -> None:
        """Interrupt the running turn; any pending decision is cancelled (never approved)."""
        for d in self._open_decisions():
            d.cancel("interrupt")
        if self._client is not None and self._turn is not None:
            try:
                await self._control(self._client.interrupt(), "interrupt")
            except SessionError as e:
                if isinstance(e.__cause__, asyncio.TimeoutError) and not self.closed:
                    # a CLI that does not even answer an interrupt will never end the turn
                    self._die(f"the Claude Code CLI stopped answering ({e})")
            except Exception:
                pass

    def interrupt_nowait(self) -> None:
        """Like :meth:`interrupt`, from synchronous code: decisions are cancelled at once."""
        for d in self._open_decisions():
            d.cancel("interrupt")
        spawn(self.interrupt())

    async def close(self, timeout: float = 15) -> None:
        """End the session: pending decisions are cancelled, the CLI exits."""
        if self.closed:
            return
        self.closed = True
        for d in self._open_decisions():
            d.cancel("close")
        for t in list(self._queued):
            t._finish("the session was closed before this prompt ran")
            t.view.error("The session was closed before this prompt ran.")
        self._queued.clear()
        self._queue.put_nowait(None)
        self._changed()  # wakes the running turn, which ends as closed
        try:
            await asyncio.wait_for(asyncio.shield(self._owner), timeout)
        except (asyncio.TimeoutError, Exception):
            self._owner.cancel()
        self._changed()

    def subscribe(self, fn: Callable[[Session], None]) -> None:
        """Call ``fn(session)`` whenever its state changes."""
        self._listeners.append(fn)

    def __repr__(self) -> str:
        return f"<Session {self.name!r} {self.status} mode={self.mode} model={self.model}>"

    # -- events and state ----------------------------------------------------------------
    def _emit(self, event: ev.Event) -> ev.Event:
        if self._log is not None:
            try:
                event = self._log.append(event)
            except (OSError, ValueError) as e:  # a full disk, an unserializable input
                self._stderr.append(f"event log: {e}")  # must not stop the agent
        self.events.append(event)
        self.state = ev.apply(self.state, event)
        self._changed()
        return event

    def _changed(self) -> None:
        self._pulse.set()
        self._pulse = asyncio.Event()
        for fn in list(self._listeners):
            try:
                fn(self)
            except Exception:
                pass

    async def _next_pulse(self, tick: float | None = None) -> None:
        """Wait for the next state change (or ``tick`` seconds, whichever comes first)."""
        if tick is None:
            await self._pulse.wait()
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._pulse.wait(), tick)

    def _check_alive(self) -> None:
        if self.closed:
            raise SessionError(f"session {self.name!r} is closed")
        if self.dead:
            raise SessionError(f"session {self.name!r} has ended: {self.dead}")

    # -- decisions -----------------------------------------------------------------------
    def _open_decisions(self) -> Iterable[Decision]:
        return [d for d in self.decisions if not d.done]

    def _open_decision(self, d: Decision) -> None:
        if isinstance(d, PlanDecision):
            for old in self.decisions:
                if isinstance(old, PlanDecision) and old is not d:
                    old.supersede()
            self._emit(
                ev.PlanProposed(
                    decision_id=d.id, plan=d.plan, plan_file=d.plan_file, tool_use_id=d.tool_use_id
                )
            )
        elif isinstance(d, QuestionDecision):
            self._emit(
                ev.QuestionAsked(decision_id=d.id, questions=d.questions, tool_use_id=d.tool_use_id)
            )
        elif isinstance(d, ToolDecision):
            self._emit(
                ev.ToolRequested(
                    decision_id=d.id,
                    tool=d.tool,
                    input=d.input,
                    suggestions=[_suggestion_dict(s) for s in d.suggestions],
                    tool_use_id=d.tool_use_id,
                )
            )
        self.decisions.append(d)
        d.on_resolved(self._record_outcome)
        view = self._turn.view if self._turn is not None else NullView()
        try:
            view.decision(d)
        except Exception as e:  # a card that cannot render must not lose the decision
            self._stderr.append(f"plan_widgets: could not show the {d.kind} card: {e}")
            with contextlib.suppress(Exception):
                view.error(f"Could not show the {d.kind} card ({e}); decide in code: "
                           f"plan_widgets.get({self.name!r}).pending")
        self._changed()

    def _record_outcome(self, d: Decision) -> None:
        o = d.outcome
        assert o is not None
        if isinstance(d, PlanDecision):
            self._emit(
                ev.PlanDecided(
                    decision_id=d.id,
                    outcome=o.status,  # type: ignore[arg-type]
                    feedback=o.feedback,
                    mode_after=o.mode if o.status == "approved" else None,
                    by=o.by,
                )
            )
        elif isinstance(d, QuestionDecision):
            self._emit(
                ev.QuestionAnswered(
                    decision_id=d.id, outcome=o.status, answers=o.answers or {},  # type: ignore[arg-type]
                    notes=o.notes or {}, by=o.by,  # type: ignore[arg-type]
                )
            )
        else:
            self._emit(
                ev.ToolDecided(
                    decision_id=d.id, outcome=o.status, reason=o.feedback, by=o.by  # type: ignore[arg-type]
                )
            )

    def _decision_closed(self, d: Decision) -> None:
        self._changed()

    def _plan_in_force(self) -> bool:
        if self._gate_plan:
            return True
        # Once the user approved (or toggled off), the gate follows at once, even before the
        # CLI's status message confirms; tools then go to the user, never straight through.
        return self.state.mode == "plan" and self.state.requested_mode in (None, "plan")

    def _note_refusal(self, tool: str, tool_input: dict[str, Any]) -> None:
        target = tool_input.get("file_path") or tool_input.get("command") or ""
        self._emit(ev.ErrorEvent(kind="plan_refusal", message=f"refused {tool} {target}".strip()))
        if self._turn is not None:
            self._turn.view.marker(f"Plan mode refused {tool} (nothing changes before approval)")

    def _note_empty_plan(self, plan_file: str | None) -> None:
        self._emit(ev.ErrorEvent(kind="empty_plan", message="ExitPlanMode without a plan"))
        if self._turn is not None:
            self._turn.view.marker("The agent presented an empty plan; asked it to write one")

    async def _leaving_plan(self, mode: str) -> None:
        """Approval: the gate stops refusing and the resting model comes back, before the
        CLI sends the next request."""
        self._gate_plan = False
        self._requested_source = "approval"
        self._emit(ev.PlanMode(mode=mode, state="requested", source="approval"))
        if self.options.plan_model and self._model_target != self.options.model:
            try:
                await self.set_model(self.options.model, why="resting model")
            except SessionError as e:  # the approval stands; say the model stayed
                self._emit(ev.ErrorEvent(kind="model", message=str(e)))
                if self._turn is not None:
                    self._turn.view.marker(f"Could not switch back to the resting model: {e}")

    # -- the owner task ------------------------------------------------------------------
    async def _main(self) -> None:
        reader: asyncio.Task[None] | None = None
        try:
            await self._start()
            reader = asyncio.get_running_loop().create_task(self._read())
            while True:
                turn = await self._queue.get()
                if turn is None or self.dead:
                    break
                if turn.done:
                    continue
                await self._run_turn(turn)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # the CLI could not start: say why, keep the kernel usable
            self._die(_describe(e, self._stderr))
        finally:
            for d in self._open_decisions():
                d.cancel("close" if self.closed else "cli")
            if reader is not None:
                reader.cancel()
            if self._client is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._client.disconnect(), 10)
            if self._scripted is not None:
                with contextlib.suppress(BaseException):
                    await self._scripted.astop()
            if self._log is not None:
                self._log.close()
            for t in list(self._queued):
                t._finish(self.dead or "the session was closed")
                t.view.error(f"Not run: {self.dead or 'the session was closed'}.")
            self._queued.clear()
            self._changed()

    async def _start(self) -> None:
        sdk_import, self._sdk_import = self._sdk_import, None
        o = self.options
        env: dict[str, str] = dict(o.env)
        if o.scripted:
            from ..scripted import ScriptedModel

            log = Path(default_log_dir(o.cwd, o.log_dir)) / f"{self.session_id}.requests.jsonl"
            self._scripted = await ScriptedModel.astart(o.scripted, log_path=log, cwd=o.cwd)
            env.update(self._scripted.env())
        elif not has_credentials(env):
            raise OptionError(NO_CREDENTIALS)
        self._cli_env = {**os.environ, **env}
        if sdk_import is not None:
            await sdk_import
        from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

        if self._log is None:
            log_dir = Path(default_log_dir(o.cwd, o.log_dir))
            self._log = EventLog(log_dir / f"{self.session_id}.jsonl")
        resumed_from = o.resume if self._resume_source is not None else None

        logging.getLogger("claude_agent_sdk").addHandler(_QUIET)  # we report failures
        with warnings.catch_warnings():
            # bypassPermissions skips can_use_tool for ordinary tools (the SDK warns); plan
            # mode still asks, so plan approval keeps working in that resting mode.
            warnings.simplefilter("ignore")
            options = self._sdk_options(ClaudeAgentOptions, env)
        self._emit(
            ev.SessionStarted(
                session_id=self.session_id,
                name=self.name,
                cwd=o.cwd or os.getcwd(),
                resting_mode=o.mode,
                model=o.model,
                plan_model=o.plan_model,
                resumed_from=resumed_from,
                scripted=o.scripted,
            )
        )
        self._client = ClaudeSDKClient(options)
        with own_process_group():  # the kernel's interrupt (SIGINT to its group) spares the CLI
            await asyncio.wait_for(self._client.connect(), o.connect_timeout)
        self._connected.set()
        source = "resume" if o.resume else "start"
        self._emit(ev.PlanMode(mode=self._resume_mode or o.mode, state="effective",
                               source=source))
        # A mode requested before the CLI was up (toggle, --plan) is applied now.
        want = self.state.requested_mode
        if want and want != o.mode:
            await self._apply_mode(want, "user")
        self._changed()

    def _load_resumed(self) -> None:
        """Resume: fold the old log back into state (markers, history, cost), at once, so a
        control bar shown now is already right; decisions that were pending when the old
        kernel died are logged as expired (their callback is gone); the mode the session was
        in (plan mode too) is the one the CLI restarts in."""
        from ..store import LogError, read_events

        o = self.options
        log_dir = Path(default_log_dir(o.cwd, o.log_dir))
        self._resume_source = find_session_log(self.session_id, log_dir)
        self._log = EventLog(log_dir / f"{self.session_id}.jsonl")
        if self._resume_source is None:
            return
        try:
            old = read_events(self._resume_source)
        except (OSError, LogError) as e:
            raise OptionError(f"cannot resume {self.session_id}: {e}") from None
        self.events = list(old)
        self.state = ev.fold(old)
        self._turn_count = self.state.turns
        if self.state.mode in ALL_MODES:
            self._gate_plan = self.state.mode == "plan"
            if o.mode == "bypassPermissions" and self.state.mode != o.mode:
                # the CLI allows bypass only if it starts in it: start there, then ask
                self._requested_source = "resume"
                self._emit(ev.PlanMode(mode=self.state.mode, state="requested", source="resume"))
            else:
                self._resume_mode = self.state.mode
        for dec_id in list(self.state.pending):
            kind = self.state.decisions[dec_id].kind
            self._emit(_expired_event(kind, dec_id))
        if self.state.working:  # the old kernel died in the middle of a turn
            self._emit(ev.TurnEnded(turn=self.state.turns, result="restarted", is_error=True,
                                    message="the kernel stopped before this turn ended"))

    def _sdk_options(self, cls: Any, env: dict[str, str]) -> Any:
        o = self.options
        return cls(
            cwd=o.cwd,
            model=o.model,
            permission_mode=self._resume_mode or o.mode,  # type: ignore[arg-type]
            can_use_tool=Gate(self),
            include_partial_messages=True,
            env=env,
            stderr=self._stderr.append,
            resume=o.resume if o.resume else None,
            session_id=None if o.resume else self.session_id,
        )

    async def _apply_mode(self, mode: str, source: str) -> None:
        try:
            await self._control(self._client.set_permission_mode(mode), f"set mode {mode}")
        except SessionError as e:
            self._gate_plan = self.state.mode == "plan"
            self._emit(ev.PlanMode(mode=mode, state="refused", source=source, detail=str(e)))  # type: ignore[arg-type]
            return
        if mode == "plan" and self.options.plan_model:
            await self.set_model(self.options.plan_model, why="plan model")
        elif (
            mode != "plan"
            and self.options.plan_model
            and self._model_target != self.options.model
        ):
            await self.set_model(self.options.model, why="resting model")

    async def _control(self, aw: Any, what: str) -> Any:
        try:
            return await asyncio.wait_for(aw, CONTROL_TIMEOUT)
        except asyncio.TimeoutError as e:
            raise SessionError(f"{what}: the CLI did not answer in {CONTROL_TIMEOUT:g} s") from e
        except SessionError:
            raise
        except Exception as e:
            raise SessionError(f"{what}: {e}") from e

    async def _run_turn(self, turn: Turn) -> None:
        self._turn = turn
        if turn in self._queued:
            self._queued.remove(turn)
        self._turn_count += 1
        turn.number = self._turn_count
        turn.started_at = time.monotonic()
        self._emit(ev.TurnStarted(turn=turn.number, prompt=turn.prompt, plan=turn.plan))
        try:
            if turn.plan and self.state.mode != "plan":
                await self.set_mode("plan", source="user")
                if self.state.refused:
                    raise SessionError(f"plan mode was refused ({self.state.refused}), so this "
                                       "prompt was not sent")
            query = self._client.query(turn.prompt, session_id=self.session_id)
            await self._control(query, "query")
            while not turn.done and not self.dead and not self.closed:
                await self._next_pulse()
            if not turn.done and self.closed:
                self._end_turn(turn, None, "the session was closed during this turn")
        except SessionError as e:
            self._end_turn(turn, None, str(e))
        finally:
            self._turn = None
            self._changed()

    def _end_turn(self, turn: Turn, result: Any, error: str | None) -> None:
        if turn.done:
            return
        cost = getattr(result, "total_cost_usd", None)
        usage = getattr(result, "usage", None) or {}
        tin = int(usage.get("input_tokens") or 0) + int(usage.get("cache_read_input_tokens") or 0)
        tin += int(usage.get("cache_creation_input_tokens") or 0)
        tout = int(usage.get("output_tokens") or 0)
        dur = getattr(result, "duration_ms", None)
        if dur is None and turn.started_at is not None:
            dur = int((time.monotonic() - turn.started_at) * 1000)
        subtype = getattr(result, "subtype", None) or ("error" if error else "success")
        before = self.state.cost_usd
        self._emit(
            ev.TurnEnded(
                turn=turn.number,
                result=subtype,
                is_error=error is not None,
                cost_usd=cost,
                input_tokens=tin,
                output_tokens=tout,
                duration_ms=dur,
                message=error,
            )
        )
        turn.result = {
            "subtype": subtype,
            "cost_usd": cost,
            "input_tokens": tin,
            "output_tokens": tout,
            "duration_ms": dur,
            "num_turns": getattr(result, "num_turns", None),
        }
        parts = [f"{dur / 1000:.1f} s" if dur is not None else None]
        parts.append(f"{tin:,} in / {tout:,} out tokens")
        if cost is not None:  # the CLI reports a running total: show this turn's share
            total = self.state.cost_usd
            parts.append(f"${max(total - before, 0.0):.4f} (session ${total:.4f})")
        summary = " · ".join(p for p in parts if p)
        if error:
            turn.view.error(error)
        turn.view.finished(summary, error is None)
        turn._finish(error)

    # -- reading the CLI -----------------------------------------------------------------
    async def _read(self) -> None:
        try:
            async for msg in self._client.receive_messages():
                try:
                    self._on_message(msg)
                except Exception as e:  # a message we cannot show must not kill the session
                    self._stderr.append(f"plan_widgets: could not handle {type(msg).__name__}: {e}")
            reason = "the Claude Code CLI exited"
        except asyncio.CancelledError:
            return
        except Exception as e:
            reason = _describe(e, self._stderr)
        if not self.closed:
            self._die(reason)

    def _die(self, reason: str) -> None:
        if self.dead:
            return
        tail = _stderr_tail(self._stderr)
        if tail and tail not in reason:
            reason = f"{reason} ({tail})"
        self.dead = reason
        self._emit(ev.ErrorEvent(kind="session_dead", message=reason))
        for d in self._open_decisions():
            d.expire("cli")
        if self._turn is not None:
            self._end_turn(self._turn, None, f"The session ended: {reason}")
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(None)
        self._changed()

    def _on_message(self, msg: Any) -> None:
        from claude_agent_sdk import (
            AssistantMessage,
            ResultMessage,
            StreamEvent,
            SystemMessage,
            TextBlock,
            ToolResultBlock,
            ToolUseBlock,
            UserMessage,
        )

        turn = self._turn
        view = turn.view if turn is not None else NullView()
        if isinstance(msg, StreamEvent):
            if msg.parent_tool_use_id:
                return
            e = msg.event
            et = e.get("type")
            if et == "message_start":
                mid = (e.get("message") or {}).get("id")
                if turn is not None and mid:
                    turn._streamed.add(mid)
                if turn is not None and turn._text and not turn._text[-1].endswith("\n\n"):
                    turn._text.append("\n\n")  # each message its own paragraph in turn.text
            elif et == "content_block_delta":
                delta = e.get("delta") or {}
                if delta.get("type") == "text_delta" and turn is not None:
                    text = delta.get("text", "")
                    turn._text.append(text)
                    view.text(text)
            return
        if isinstance(msg, SystemMessage):
            data = msg.data or {}
            if msg.subtype == "init":
                if data.get("model"):
                    self._saw_model(str(data["model"]))
                pm = data.get("permissionMode")
                if pm and pm != self.state.mode:
                    self._saw_mode(str(pm))
            elif msg.subtype == "status" and data.get("permissionMode"):
                self._saw_mode(str(data["permissionMode"]))
            return
        if isinstance(msg, AssistantMessage):
            if msg.model and msg.model != "<synthetic>" and msg.parent_tool_use_id is None:
                self._saw_model(msg.model)  # <synthetic>: the CLI's own error message
            streamed = turn is not None and msg.message_id in turn._streamed
            # The CLI's own report of an API failure (model "<synthetic>"): the ResultMessage
            # that follows says it as one line; shown here too it would read as the agent's
            # words, glued to any text cut off before it.
            failed = msg.error is not None or msg.model == "<synthetic>" and any(
                isinstance(b, TextBlock) and b.text.startswith("API Error") for b in msg.content)
            for block in msg.content:
                if failed:
                    break
                if isinstance(block, TextBlock) and not streamed and turn is not None:
                    turn._text.append(block.text)
                    view.text(block.text)
                elif isinstance(block, ToolUseBlock):
                    if turn is not None:
                        turn._tools[block.id] = block.name
                    if block.name == "EnterPlanMode":
                        view.marker("The agent entered plan mode")
                    if block.name not in ("ExitPlanMode", "AskUserQuestion"):
                        view.tool_started(block.id, block.name, dict(block.input or {}))
            return
        if isinstance(msg, UserMessage):
            if isinstance(msg.content, list) and turn is not None:
                for block in msg.content:
                    if isinstance(block, ToolResultBlock):
                        name = turn._tools.get(block.tool_use_id)
                        if name not in (None, "ExitPlanMode", "AskUserQuestion"):
                            view.tool_finished(
                                block.tool_use_id, block.content, bool(block.is_error)
                            )
            return
        if isinstance(msg, ResultMessage):
            if turn is None:
                return
            error = None
            if msg.is_error:
                error = _result_error(msg)
            self._end_turn(turn, msg, error)
            return

    def _saw_mode(self, mode: str) -> None:
        prev = self.state.mode
        if mode == prev and self.state.requested_mode is None:
            return
        requested = self.state.requested_mode
        if requested == mode:
            source = self._requested_source or "user"
        elif mode == "plan":
            source = "model"
        else:
            source = "model" if prev == "plan" else "user"
        self._emit(ev.PlanMode(mode=mode, state="effective", source=source))  # type: ignore[arg-type]
        self._gate_plan = mode == "plan"
        if self._turn is not None and prev != mode:
            self._turn.view.marker(f"Mode: {prev or '?'} → {mode}" + (
                " (the agent entered plan mode)" if source == "model" and mode == "plan" else ""
            ))
        if source == "model" and mode == "plan" and self.options.plan_model:
            spawn(self.set_model(self.options.plan_model, why="plan model"))

    def _saw_model(self, model: str) -> None:
        prev = self.state.model
        if model == prev:
            return
        why = getattr(self, "_why_model", None) or ("start" if prev is None else "reported by CLI")
        self._why_model = None
        self._emit(ev.ModelSwitched(from_model=prev, to_model=model, why=why))
        if self._turn is not None and prev is not None:
            self._turn.view.marker(f"Model: {prev} → {model} ({why})")


def _suggestion_dict(s: Any) -> dict[str, Any]:
    try:
        return dict(s.to_dict())
    except Exception:
        return {"repr": repr(s)}


def _expired_event(kind: str, dec_id: str) -> ev.Event:
    if kind == "plan":
        return ev.PlanDecided(decision_id=dec_id, outcome="expired", feedback=None, mode_after=None,
                              by="restart")
    if kind == "question":
        return ev.QuestionAnswered(decision_id=dec_id, outcome="expired", answers={}, by="restart")
    return ev.ToolDecided(decision_id=dec_id, outcome="expired", reason=None, by="restart")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _stderr_tail(lines: deque[str]) -> str:
    useful = [_ANSI.sub("", ln).strip() for ln in lines if not ln.startswith("plan_widgets:")]
    useful = [ln for ln in useful if ln]
    return " ".join(useful[-3:])[-400:]


def _describe(e: BaseException, stderr: deque[str]) -> str:
    if isinstance(e, OptionError):
        return str(e)
    if type(e).__name__ == "ScriptError":  # the scripted model's file, not the CLI
        return f"the scripted model cannot start: {e}"
    if isinstance(e, asyncio.TimeoutError):
        return "the Claude Code CLI did not start in time"
    tail = _stderr_tail(stderr)
    if tail:  # the CLI's own reason beats the SDK's "Command failed with exit code 1"
        return f"the Claude Code CLI exited: {tail}"
    code = getattr(e, "exit_code", None)
    if isinstance(code, int) and code < 0:  # e.g. killed by the OOM killer or by hand
        return f"the Claude Code CLI exited: killed by signal {-code}"
    if isinstance(code, int):
        return f"the Claude Code CLI exited with code {code}"
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return f"the Claude Code CLI failed: {_ANSI.sub('', text)}"


def _result_error(msg: Any) -> str:
    status = getattr(msg, "api_error_status", None)
    detail = (getattr(msg, "result", None) or "").strip()
    errors = getattr(msg, "errors", None) or []
    if msg.subtype == "error_during_execution" and (
        getattr(msg, "terminal_reason", None) in ("aborted_streaming", "aborted_tools")
        or not (detail or errors)
    ):
        return "Interrupted."
    detail = " ".join(detail.split())
    api = detail[len("API Error"):].lstrip(": ") if detail.startswith("API Error") else None
    if status:
        names = {429: "rate limited", 500: "server error", 529: "overloaded"}
        label = names.get(status, "error")
        return f"The model API failed: HTTP {status} ({label}): {_short(api or detail)}"
    if api is not None:
        low = api.lower()
        if "streamtruncated" in low or "stream_truncated" in low:
            return "The model API failed: the response stream was cut off halfway."
        if "econnrefused" in low or "connection refused" in low:
            return "The model API could not be reached: connection refused."
        return f"The model API failed: {_short(api)}"
    if errors:
        return "The turn failed: " + _short("; ".join(map(str, errors)))
    return f"The turn failed ({msg.subtype}): {_short(detail)}".rstrip(": ")


def _short(text: str, limit: int = 240) -> str:
    """One line: the first sentences of ``text`` up to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
