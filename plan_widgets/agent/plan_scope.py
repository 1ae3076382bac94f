"""A mode for this plan only (issue 43, point 5): back to the resting mode when its work ends.

Claude Code's users ask for a mode that lasts for one plan's work (anthropics/claude-code
#64255, and #76981: "plan, approve, execute, plan the next thing"): approve into Accept edits
or Auto for the work, then go on in the mode the session rests in, without remembering to
switch back. The card's picker offers each mode also "for this plan only"
(widgets/kinds/plan_targets.py); the approval's ``plan:decided`` carries ``back_to`` (the
resting mode), folded into ``SessionState.back_to``: the bar shows it, and a resumed session
still goes back.

The plan's work is: the turn the plan was approved in (the CLI carries the plan out in that
same turn: docs/cli.md#plan-mode), a start-fresh's turns (its ``/clear`` and the plan's turn,
agent/handoff.py), and the turns the CLI starts by itself meanwhile (a background agent's
report: it starts one when the agent ends, docs/cli.md). So the work ends at the end of a turn
after which none of those turns is left and no subagent runs; the turn that ends it says so,
and the resting mode is requested at once (the bar shows it pending, then confirmed). A prompt
of the user's is not the plan's work: when it is about to be sent and the return is still
pending (a background agent still runs), the return is made first. A mode the user picks
meanwhile wins: its ``plan:mode`` request drops the return (model/folding.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Protocol

from .. import model as ev
from ..model.errors import SessionError
from ..model.events import ModeSource
from . import wording
from .seam import AgentClient
from .tasks import spawn
from .turn import Turn

log = logging.getLogger("plan_widgets")


class ScopeHost(Protocol):
    """What the return needs of its session."""

    @property
    def state(self) -> ev.SessionState: ...
    @property
    def connected(self) -> bool: ...
    @property
    def client(self) -> AgentClient | None: ...

    def emit(self, event: ev.Event) -> ev.Event: ...


class ModeRequests(Protocol):
    """What the return needs of mode tracking (:class:`~.modes.Modes`, which owns it)."""

    requested_source: ModeSource | None

    async def apply(self, mode: str, source: ModeSource) -> None: ...


class PlanScope:
    """The work of the plan approved for this plan only, and the return when it ends."""

    def __init__(self, session: ScopeHost, modes: ModeRequests) -> None:
        self.s = session
        self.modes = modes
        self.turns: list[Turn] = []
        """The turns that carry the plan out (the approval's, a start-fresh's)."""
        self._going: asyncio.Task[None] | None = None

    def begin(self, turns: Iterable[Turn | None]) -> None:
        """A plan was approved for this plan only; ``turns`` carry it out."""
        self.turns = [t for t in turns if t is not None]

    def turn_ending(self, turn: Turn) -> None:
        """``turn`` ends (its view still live): if that ends the plan's work, say so in it and
        go back to the resting mode."""
        back = self.s.state.back_to
        if back is None or self._under_way():
            return
        if any(not t.done and t is not turn for t in self.turns) or self.s.state.running_agents:
            return  # more of the plan's work to come
        self._go(back, turn, wording.plan_work_done(back))

    async def before_send(self, turn: Turn) -> None:
        """``turn`` is about to be sent: a prompt that is not the plan's work runs in the
        resting mode (the return is made first; every wait in it is bounded)."""
        back = self.s.state.back_to
        if back is not None and turn not in self.turns and not self._under_way():
            self._go(back, turn, wording.plan_work_left(back))
        if self._going is not None and not self._going.done():
            await asyncio.shield(self._going)

    def _under_way(self) -> bool:
        return self._going is not None and not self._going.done()

    def _go(self, back: str, turn: Turn, said: str) -> None:
        self.turns = []
        turn.view.marker(said)
        self._going = spawn(self._back(back), name="claude:plan-scope")

    async def _back(self, back: str) -> None:
        """Request the resting mode (it logs ``plan:mode`` with source ``plan_end``, which
        clears the pending return); the marker shows it until the CLI confirms."""
        s, modes = self.s, self.modes
        if s.state.mode == back and s.state.requested_mode is None:
            s.emit(ev.PlanMode(mode=back, state="effective", source="plan_end"))
            return
        modes.requested_source = "plan_end"
        s.emit(ev.PlanMode(mode=back, state="requested", source="plan_end"))
        if not s.connected or s.client is None:
            return
        try:
            await modes.apply(back, "plan_end")
        except SessionError as e:  # the mode request itself is reported by apply
            log.warning("could not go back to the resting mode: %s", e)
            s.emit(ev.ErrorEvent(kind="model", message=str(e)))
