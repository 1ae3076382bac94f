"""A session's CLI goes to sleep when idle, and wakes for the next turn: its cost is bounded.

Each live session holds one Claude Code CLI of about 200-400 MB (claude-code #13199), so a
user with five notebooks open held up to 2 GB until the kernels died. A session idle for
``idle_timeout`` seconds (no turn, no decision waiting, no background agent running, nothing
happening) now closes its CLI: ``session:asleep`` is logged and its status is ``asleep``. The
next turn starts the CLI again with ``resume`` of the same session id, so the CLI's own
transcript (the context), the permission mode it was in (plan mode too) and the model come
back; ``session:started`` with ``resumed_from`` set to its own id records the wake. The event
log stays open (and its lock held) while it sleeps: no other kernel takes the session over.

The kernel's cap on live CLIs (``ipython.limits``) uses the same sleep (reason ``cap``).

Why a default of one hour (``ClaudeMagics.idle_timeout = 3600``), as measured: an idle CLI
holds about 200 MB (docs/benchmarks.md, figure 8), and waking costs the next turn one CLI
start, 2.5-3.6 s on this shared 2-core machine under load (a first start: 2.1-7.9 s; 0.43 s
for ``connect`` on a quiet one), the same as any new session. A user away for an
hour pays that once; a user between two cells does not pay at all. A short timeout saves
memory on a crowded hub (the admin's setting); off (0) keeps the CLI until the kernel ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

from .. import model as ev
from ..model.errors import SessionError
from ..model.options import ALL_MODES
from .decisions import Decision
from .modes import Modes
from .ports import SessionPort
from .runner import Runner
from .scratch import ScratchDir
from .seam import AgentClient

log = logging.getLogger("plan_widgets")
Reason = Literal["idle", "cap"]
WAKING = "Resuming the session: its CLI was closed while idle (same conversation, mode and model)."


class SleepHost(SessionPort, Protocol):
    """What the idle watch needs of its session besides the shared port: whether anything
    still needs the CLI, and a word on every change."""

    @property
    def busy(self) -> bool: ...
    @property
    def running_agents(self) -> list[ev.AgentRecord]: ...

    def open_decisions(self) -> list[Decision]: ...
    def subscribe(self, fn: Callable[[Any], None]) -> None: ...


class CliOwner(Protocol):
    """Who starts and holds the session's CLI (the lifecycle): the sleep closes it, the wake
    starts it again."""

    client: AgentClient | None
    connected: asyncio.Event
    reader: asyncio.Task[None] | None
    scripted: Any
    scratch: ScratchDir | None
    resumed_from: str | None
    resume_mode: str | None

    async def start(self) -> None: ...
    async def read(self) -> None: ...


class Sleeper:
    """Watches one session for idleness; puts its CLI to sleep and wakes it for a turn."""

    def __init__(self, owner: CliOwner, session: SleepHost, runner: Runner,
                 modes: Modes) -> None:
        self.owner = owner
        self.s = session
        self.runner = runner
        self.modes = modes
        self.asleep = False
        self.last_active = time.monotonic()
        """When the session's state last changed (a turn, a decision, a mode, an event)."""
        self._nap: Reason | None = None
        self._watch: asyncio.Task[None] | None = None
        session.subscribe(self._touch)

    def _touch(self, _s: Any) -> None:
        if not self.asleep:
            self.last_active = time.monotonic()

    def start_watching(self) -> None:
        """Start the idle timer (once; only if the session has an ``idle_timeout``)."""
        if self._watch is None and self.s.options.idle_timeout:
            self._watch = asyncio.get_running_loop().create_task(
                self._watch_idle(), name=f"claude-idle:{self.s.name}")

    async def _watch_idle(self) -> None:
        s = self.s
        while not (s.closed or s.dead):
            timeout = s.options.idle_timeout
            if not timeout:
                return
            left = self.last_active + timeout - time.monotonic()
            if left <= 0 and self.may_sleep():
                self.request("idle")
                left = timeout
            await asyncio.sleep(max(left, min(timeout, 1.0)))

    @property
    def leaving(self) -> bool:
        """Asleep, or about to be (the owner task closes the CLI after the running step)."""
        return self.asleep or self._nap is not None

    @property
    def idle_for(self) -> float:
        """Seconds since the session's state last changed."""
        return time.monotonic() - self.last_active

    def may_sleep(self) -> bool:
        """Idle, with nothing that needs the CLI: no turn (queued, running, or the CLI's own),
        no decision waiting, no background agent running."""
        s, owner = self.s, self.owner
        return (not self.asleep and self._nap is None and owner.client is not None
                and owner.connected.is_set() and not s.busy and s.pending is None
                and not s.open_decisions() and not s.running_agents
                and not (s.closed or s.dead))

    def request(self, reason: Reason) -> bool:
        """Ask the owner task to put the CLI to sleep after the running step (False: the
        session is not idle now)."""
        if not self.may_sleep():
            return False
        self._nap = reason
        self.runner.stop()  # serve() returns; serve() below decides
        return True

    async def serve(self) -> None:
        """The owner task's serve phase: turns in order; between them, a sleep when asked.
        Returns when the session closes or dies."""
        s, runner = self.s, self.runner
        while True:
            await runner.serve()
            reason, self._nap = self._nap, None
            if reason is None or s.closed or s.dead:
                return
            if runner.queued or s.running_agents or s.pending is not None:
                continue  # a turn came in meanwhile: stay awake
            await self._sleep(reason)
            if s.closed or s.dead:
                return
            await self._wake()

    async def _sleep(self, reason: Reason) -> None:
        owner, s = self.owner, self.s
        s.emit(ev.SessionAsleep(reason=reason, idle_seconds=round(self.idle_for, 1)))
        self.asleep = True
        if owner.reader is not None:
            owner.reader.cancel()  # the CLI's exit is ours, not a death
        owner.connected.clear()
        client, owner.client = owner.client, None
        scripted, owner.scripted = owner.scripted, None
        scratch, owner.scratch = owner.scratch, None
        s.notify()  # the control bar says "asleep" at once
        self.runner.meter.stop()
        if client is not None:
            await _quietly(client.disconnect(), "disconnect the sleeping CLI", 10.0)
        if scripted is not None:
            await _quietly(scripted.astop(), "stop the scripted model", 10.0)
        if scratch is not None:
            scratch.remove()
        log.info("session %s asleep (%s, idle %.0f s)", s.name, reason, self.idle_for)
        while not (self.runner.queued or s.closed or s.dead):
            await s.next_change()

    async def _wake(self) -> None:
        """Start the CLI again on the same conversation, in the mode it was in."""
        owner, s = self.owner, self.s
        self.asleep = False
        self.last_active = time.monotonic()
        for turn in self.runner.queued[:1]:
            turn.view.marker(WAKING)
        st = s.state
        owner.resumed_from = s.session_id
        s.update_options(resume=s.session_id)
        owner.resume_mode = None
        if st.mode in ALL_MODES:  # as a resume after a restart
            owner.resume_mode = self.modes.restart_mode(st.mode)
        target = self.modes.model_target
        await owner.start()
        owner.reader = asyncio.get_running_loop().create_task(owner.read())
        if target is not None and target != s.options.model:
            try:  # a model set live (or the plan model) is the one the CLI goes on with
                await self.modes.set_model(target, self.modes.why_model or "resumed")
            except SessionError as e:
                s.marker(f"Could not switch back to the model {target}: {e}")


def budget_left(cap: float | None, spent: float) -> float | None:
    """What a new CLI process of the session may still spend under a cap of ``cap``.

    The CLI enforces ``--max-budget-usd`` per process (measured, CLI 2.1.332: the turn that
    crosses it ends ``error_max_budget_usd``, later turns fail at once), and its count starts
    at 0 with each process: after a sleep, or a resume, the cap is what is left of it."""
    return None if cap is None else max(cap - spent, 0.0)


async def _quietly(aw: Any, what: str, timeout: float) -> None:
    try:
        await asyncio.wait_for(aw, timeout)
    except BaseException as e:  # noqa: BLE001 - a sleeping CLI's clean-up never raises
        log.debug("could not %s: %r", what, e)
