"""A long-lived Claude Code session: the coordinator of one CLI, its turns and its decisions.

Data flows one way: the CLI's messages arrive as signals (:mod:`signals`, through the seam in
:mod:`seam`), each becomes typed events (appended to the durable log and folded into
:attr:`Session.state`) and calls on the running turn's :class:`TurnView`. Decisions flow back
through one gate (:mod:`gate`). The owner task's phases live in :mod:`lifecycle`, mode and
model tracking in :mod:`modes`, the words users see in :mod:`wording`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from .. import model as ev
from ..model.errors import OptionError, SessionError
from ..model.options import SessionOptions
from . import wording
from .decisions import Decision, DecisionList, PlanDecision
from .gate import Gate
from .gate_host import SessionGateHost
from .handoff import Handoff, start_fresh
from .lifecycle import Lifecycle
from .modes import Modes
from .rewind import Rewinder, RewindPlan
from .runner import Runner
from .seam import AgentClient, ClientFactory, HostTools, bounded_control
from .tasks import spawn
from .turn import NullView, Turn, TurnView

log = logging.getLogger("plan_widgets")


class Session:
    """A Claude Code session. Make one with :func:`plan_widgets.session`."""

    def __init__(self, options: SessionOptions, *, client: ClientFactory | None = None,
                 tools: HostTools | None = None) -> None:
        self.options = options.validated()
        self.host_tools: HostTools | None = tools if self.options.kernel_tools else None
        """The kernel's tools served to the agent, and the open notebook (None: off)."""
        self.name = self.options.name
        self.session_id: str = self.options.resume or str(uuid.uuid4())
        self.events: list[ev.Event] = []
        self.state: ev.SessionState = ev.fold([])
        self.decision_list = DecisionList()
        self.dead: str | None = None
        self.closed = False
        self._pulse = asyncio.Event()
        self._listeners: list[Callable[[Session], None]] = []
        self._between_cells: Callable[[str], TurnView] | None = None
        self.modes = Modes(self, self.options.plan, self.options.model)
        self.runner = Runner(self, self.modes)
        self.gate = Gate(SessionGateHost(self, self.decision_list, self.runner, self.modes,
                                         self._start_fresh))
        self.rewinder = Rewinder(self)
        self.lifecycle = Lifecycle(self, client, runner=self.runner, modes=self.modes,
                                   gate=self.gate, decision_list=self.decision_list)
        if self.options.resume:
            self.lifecycle.restore()
        self._owner = asyncio.get_running_loop().create_task(
            self.lifecycle.run(), name=f"claude:{self.name}")

    # -- what the session is -----------------------------------------------------------------
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
    def plan_in_force(self) -> bool:
        """Whether the gate treats plan mode as in force (confirmed, or requested and not yet
        left): tools are refused, and ``--mode`` only names where approval leads."""
        return self.modes.plan_in_force

    @property
    def decisions(self) -> list[Decision]:
        """Every decision of this session, oldest first."""
        return self.decision_list.all

    @property
    def pending(self) -> Decision | None:
        """The decision awaiting the user, or None."""
        return self.decision_list.pending

    def open_decisions(self) -> list[Decision]:
        """The decisions still waiting, oldest first."""
        return self.decision_list.open()

    @property
    def plans(self) -> list[Any]:
        """Approved plans, oldest first (from the event log, so they survive restarts)."""
        return list(self.state.plans)

    @property
    def context(self) -> Any:
        """How full the context was after the last turn (a ContextUsage, or None)."""
        return self.runner.meter.now

    async def context_usage(self) -> Any:
        """Measure how full the context is now (bounded; it is :attr:`context` then)."""
        return await self.runner.meter.read(self.state.turns)

    async def rewind(self, turn: Any = None, *, dry_run: bool = False,
                     by: ev.Actor = "code") -> RewindPlan:
        """Put files back as before ``turn`` (a Turn or its number; default: the last that
        changed files). ``dry_run``: only list what would change (see :mod:`.rewind`).
        ``by``: who asked (``user``: a button or a command), as logged."""
        if dry_run:
            return await self.rewinder.preview(turn)
        return await self.rewinder.rewind(turn, by=by)

    def rewind_target(self, turn: Any = None) -> int:
        """The number of the turn a rewind of ``turn`` goes back to before (default: the last
        turn that changed files); an OptionError (one line) says why there is none."""
        return self.rewinder.resolve(turn)[0]

    @property
    def agents(self) -> list[ev.AgentRecord]:
        """Every subagent of the session, oldest first (running or ended; from the log)."""
        return list(self.state.agents)

    @property
    def running_agents(self) -> list[ev.AgentRecord]:
        """The subagents still running (a background agent goes on after its cell)."""
        return self.state.running_agents

    async def stop_agent(self, agent_id: str) -> None:
        """Stop a running subagent (its id from :attr:`agents`; the CLI's ``stop_task``)."""
        client = self.client
        if client is None or self.dead or self.closed:
            raise SessionError(f"session {self.name!r} has no running CLI")
        if not any(a.id == agent_id for a in self.running_agents):
            raise OptionError(f"no running agent {agent_id!r} in session {self.name!r} "
                              "(see %claude agents)")
        await self.control(client.stop_task(agent_id), "stop agent")

    def show_between_cells(self, factory: Callable[[str], TurnView] | None) -> None:
        """Where output goes that arrives while no cell of ours runs: a turn the CLI starts
        by itself, a card a background agent asks for. ``factory(title)`` makes a view (the
        notebook: below the newest cell of the session)."""
        self._between_cells = factory

    def _start_fresh(self, decision: PlanDecision) -> Handoff | None:
        """A plan approved to start fresh runs in a new conversation (see :mod:`.handoff`)."""
        return start_fresh(self, self.modes, self.lifecycle, decision)

    def between_cells_view(self, title: str) -> TurnView:
        """A view for output that belongs to no cell (nowhere, if no frontend said where)."""
        if self._between_cells is not None:
            try:
                return self._between_cells(title)
            except Exception:
                log.exception("could not show %r between cells", title)
        return NullView()

    @property
    def busy(self) -> bool:
        """True while a turn runs (also one the CLI started by itself) or is queued."""
        r = self.runner
        return r.turn is not None or r.cli_turn is not None or bool(r.queued)

    @property
    def current_turn(self) -> Turn | None:
        """The turn running now (None between turns)."""
        return self.runner.turn

    @property
    def connected(self) -> bool:
        """True once the CLI has answered ``initialize`` (stays true after it ends)."""
        return self.lifecycle.connected.is_set()

    @property
    def client(self) -> AgentClient | None:
        """The connected CLI (None before it starts)."""
        return self.lifecycle.client

    @property
    def cli_env(self) -> Mapping[str, str]:
        """The environment the CLI runs with."""
        return self.lifecycle.cli_env

    @property
    def cli_pid(self) -> int | None:
        """The CLI's process id while it runs."""
        return self.lifecycle.pid

    @property
    def log_path(self) -> Path | None:
        """The session's event log file (None before it is known)."""
        return self.lifecycle.log.path if self.lifecycle.log is not None else None

    @property
    def log_problem(self) -> str | None:
        """Why the event log is incomplete (a full disk), or None: the session goes on."""
        return self.lifecycle.log_problem

    # -- sleep: an idle session's CLI closes, the next turn resumes it (see :mod:`.idle`) ------
    @property
    def leaving(self) -> bool:
        """Asleep, or about to be (its CLI closes after the running step)."""
        return self.lifecycle.idle.leaving

    @property
    def last_active(self) -> float:
        """When the session's state last changed (``time.monotonic()``)."""
        return self.lifecycle.idle.last_active

    def may_sleep(self) -> bool:
        """Idle, with nothing that needs the CLI (no turn, decision or running agent)."""
        return self.lifecycle.idle.may_sleep()

    def sleep(self, reason: Literal["idle", "cap"] = "cap") -> bool:
        """Close the CLI after the running step if the session may sleep (False: it may not);
        the next turn starts it again on the same conversation."""
        return self.lifecycle.idle.request(reason)

    @property
    def status(self) -> str:
        """idle, starting, working, waiting (for you), asleep, dead or closed."""
        if self.closed:
            return "closed"
        if self.dead or (self.lifecycle.idle.asleep and not self.runner.queued):
            return "dead" if self.dead else "asleep"
        if self.pending is not None:
            return "waiting"
        if self.busy:
            return "working"
        return "idle" if self.connected else "starting"

    def __repr__(self) -> str:
        return f"<Session {self.name!r} {self.status} mode={self.mode} model={self.model}>"

    # -- asking and waiting ------------------------------------------------------------------
    def ask(self, prompt: str, *, view: TurnView | None = None, plan: bool = False,
            verbatim: bool = False) -> Turn:
        """Queue ``prompt`` as the next turn and return it; ``await`` it for the end
        (``verbatim``: a prompt starting with ``/`` is text, not a command)."""
        if not prompt or not prompt.strip():
            raise OptionError("the prompt is empty: write what Claude should do")
        self.check_alive()
        turn = Turn(self, prompt, view or NullView(), plan=plan)
        turn.verbatim = verbatim
        self.runner.enqueue(turn)
        self.notify()
        return turn

    def withdraw(self, turn: Turn, why: str = "interrupted before it started") -> bool:
        """Take back a prompt that is still queued: it never runs. False if it has started."""
        if not self.runner.withdraw(turn, why):
            return False
        self.notify()
        return True

    async def wait(self, timeout: float | None = 60, *, decided: bool = False) -> str:
        """Wait until idle or a decision waits for you (``decided``: until it is made too)."""
        waits = ("working", "starting") + (("waiting",) if decided else ())
        await self._until(lambda: self.status not in waits, timeout)
        return self.status

    async def wait_for_decision(self, timeout: float | None = 60) -> Decision:
        """Wait for the next decision awaiting the user (returns a pending one at once)."""
        def ready() -> bool:
            if self.pending is not None:
                return True
            if self.dead or self.closed:
                raise SessionError(f"session {self.name!r} ended: {self.dead or 'closed'}")
            if not self.busy and self.connected and not self.running_agents:
                raise SessionError("no turn or agent is running, so no decision will come")
            return False

        await self._until(ready, timeout)
        assert self.pending is not None
        return self.pending

    async def settle(self, turn: Turn, timeout: float | None = None) -> None:
        """Wait until ``turn`` ends, or any decision waits for the user."""
        # The tick matters: ipykernel 7.4 delivers a kernel interrupt to an awaiting cell only
        # when its loop next wakes (measured: a bare 30 s sleep ignored it for 28 s).
        await self._until(lambda: turn.done or self.pending is not None, timeout, tick=0.25)

    async def _until(self, ready: Callable[[], bool], timeout: float | None,
                     tick: float | None = None) -> None:
        async def loop() -> None:
            while not ready():
                await self.next_change(tick)

        await asyncio.wait_for(loop(), timeout)

    # -- control -----------------------------------------------------------------------------
    async def set_plan_mode(self, on: bool) -> None:
        """Enter or leave plan mode live (the CLI confirms; see :attr:`mode`)."""
        await self.modes.set_mode("plan" if on else self.options.mode, "user")

    async def set_mode(self, mode: str, *, source: str = "user") -> None:
        """Request a permission mode; the marker shows it pending until the CLI confirms."""
        await self.modes.set_mode(mode, source)

    async def set_model(self, model: str | None, *, why: str = "requested") -> None:
        """Switch the model for the next request (the marker follows what the CLI reports)."""
        await self.modes.set_model(model, why)

    def update_options(self, **changes: Any) -> None:
        """Change options that apply from now on without a restart (``approval_timeout``,
        ``model``, ``plan_model``, ``mode`` as the resting mode); None values are ignored."""
        self.options = self.options.with_(**changes)
        self.notify()

    def end_decisions(self, by: ev.Actor, *, only: Decision | None = None) -> None:
        """End open decisions (or only ``only``) unanswered: cancelled, never approved."""
        self.decision_list.end_open(by, only=only)

    async def interrupt(self) -> None:
        """Interrupt the running turn; any pending decision is cancelled (never approved)."""
        self.end_decisions("interrupt")
        client = self.client
        if client is None or (self.runner.turn is None and self.runner.cli_turn is None):
            return
        try:
            await self.control(client.interrupt(), "interrupt")
        except SessionError as e:
            if isinstance(e.__cause__, asyncio.TimeoutError) and not self.closed:
                # a CLI that does not even answer an interrupt will never end the turn
                self.die(wording.stopped_answering(e))
            else:
                log.info("interrupt failed: %s", e)

    def interrupt_nowait(self) -> None:
        """Like :meth:`interrupt`, from synchronous code: decisions are cancelled at once."""
        self.end_decisions("interrupt")
        spawn(self.interrupt())

    async def close(self, timeout: float = 15) -> None:
        """End the session: pending decisions are cancelled, the CLI exits."""
        if self.closed:
            return
        self.closed = True
        self.end_decisions("close")
        self.runner.drop_queued(wording.CLOSED_BEFORE_RUN, shown="The session was closed "
                                "before this prompt ran.")
        self.runner.stop()
        self.notify()  # wakes the running turn, which ends as closed
        if not self.connected:  # a CLI still starting (or hung in initialize) is stopped now
            self._owner.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(self._owner), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError, Exception):  # stop it anyway
            log.debug("session %s did not end cleanly", self.name, exc_info=True)
            self._owner.cancel()
        self.notify()

    def subscribe(self, fn: Callable[[Session], None]) -> None:
        """Call ``fn(session)`` whenever its state changes."""
        self._listeners.append(fn)

    # -- events and state (what the helpers use: the SessionPort of .ports) -----------------
    def emit(self, event: ev.Event) -> ev.Event:
        """Log ``event``, fold it into the state, and tell the listeners."""
        event = self.lifecycle.write(event)
        self.events.append(event)
        self.state = ev.apply(self.state, event)
        self.notify()
        return event

    def restore(self, events: list[ev.Event]) -> None:
        """Take a resumed session's logged past as its own."""
        self.events = list(events)
        self.state = ev.fold(events)
        self.runner.count = self.state.turns

    def marker(self, text: str) -> None:
        """Show a marker in the running turn (nowhere, between turns)."""
        self.runner.marker(text)

    def check_alive(self) -> None:
        if self.closed:
            raise SessionError(f"session {self.name!r} is closed")
        if self.dead:
            raise SessionError(f"session {self.name!r} has ended: {self.dead}")

    async def control(self, aw: Awaitable[Any], what: str) -> Any:
        """A control request to the CLI, bounded (:func:`~.seam.bounded_control`)."""
        return await bounded_control(aw, what)

    def notify(self) -> None:
        """The state changed: wake whoever waits for a change, and tell the listeners."""
        self._pulse.set()
        self._pulse = asyncio.Event()
        for fn in list(self._listeners):
            try:
                fn(self)
            except Exception:
                log.exception("a session listener failed")

    async def next_change(self, tick: float | None = None) -> None:
        """Wait for the next state change (or ``tick`` seconds, whichever comes first)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._pulse.wait(), tick)

    # -- the end (the lifecycle calls it when the CLI is gone) ------------------------------
    def die(self, reason: str) -> None:
        """The CLI is gone (or never started): end everything that waits on it."""
        if not self.dead:
            self.dead = wording.with_stderr(reason, self.lifecycle.stderr)
            self.lifecycle.ended(self.dead)
