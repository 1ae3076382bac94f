"""The session as the gate's host: what the gate asks of a session, in one small class.

The gate (:mod:`gate`) speaks to its host through the :class:`~plan_widgets.agent.gate.GateHost`
protocol only; :class:`SessionGateHost` answers for a session: a new decision is logged,
recorded and shown on the running turn's card; refusals are logged and said as a marker; an
approved plan leaves plan mode through mode tracking.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .. import model as ev
from ..model.events import Actor
from ..model.options import SessionOptions
from . import wording
from .decisions import Decision, DecisionList, PlanDecision
from .modes import Modes
from .ports import SessionPort
from .rules import Referee
from .runner import Runner
from .seam import HostTools

log = logging.getLogger("plan_widgets")
METER_DELAY = 1.0
"""Seconds a plan card waits before the context meter is read (if it still waits).

Why not at once: the first ``get_context_usage`` while an ``ExitPlanMode`` request waits is
the CLI's heaviest (bare SDK, CLI 2.1.337, 2 cores at load 9: 1.1 s to answer and 135 ms of
the CLI's CPU, the next one 20 ms and 10 ms), and a quick Approve's work went on beside it:
the Approve path took ~60 ms more once the meter was read as the card opened (issue 46,
docs/benchmarks.md figure 1). A person reads a plan for longer than this; a click in the
second after the read begins still shares the CLI with it."""


class GateHostPort(SessionPort, Protocol):
    """What the gate's host needs of its session besides the shared port."""

    @property
    def plan_in_force(self) -> bool: ...
    @property
    def host_tools(self) -> HostTools | None: ...

    def end_decisions(self, by: Actor, *, only: Decision | None = None) -> None: ...


class SessionGateHost:
    """A :class:`~plan_widgets.agent.gate.GateHost` for one session: it records decisions in
    ``decision_list``, shows them where ``runner`` says, leaves plan mode through ``modes``,
    and hands a plan approved to start fresh to ``start_fresh``."""

    def __init__(self, session: GateHostPort, decision_list: DecisionList, runner: Runner,
                 modes: Modes, start_fresh: Callable[[PlanDecision], object]) -> None:
        self.s = session
        self.decision_list = decision_list
        self.runner = runner
        self.modes = modes
        self.start_fresh = start_fresh
        self.referee = Referee()
        """Decides what no one can click (agent/rules.py); the ipython layer configures it."""

    @property
    def options(self) -> SessionOptions:
        return self.s.options

    @property
    def plan_in_force(self) -> bool:
        return self.s.plan_in_force

    @property
    def cli_env(self) -> Mapping[str, str]:
        return self.s.cli_env

    @property
    def host_tools(self) -> HostTools | None:
        return self.s.host_tools

    def open_decision(self, d: Decision) -> None:
        s = self.s
        s.emit(d.asked_event())
        self.decision_list.add(d)
        d.on_resolved(self._decided)
        if isinstance(d, PlanDecision):  # its comments are logged as they come
            last = next((r for r in reversed(list(s.state.decisions.values()))
                         if r.kind == "plan" and r.mode_after), None)
            d.last_target = last.mode_after if last else None
            d.last_only = bool(last and last.back_to)
            d.on_comment = lambda c, added: s.emit(ev.PlanCommented(
                decision_id=d.id, removed=not added, **c.as_dict()))
            self._meter_while_open(d)  # the meter while the plan waits
        rec = self.runner.agents.record(d.agent_id)
        d.agent = rec.description if rec is not None else d.agent_id
        view, own = self.runner.decision_view(d)
        try:
            view.decision(d)
            if own:  # a view of its own below the newest cell: static once decided
                getattr(view, "turn_done", lambda: None)()
        except Exception as e:  # a card that cannot render must not lose the decision
            log.exception("could not show the %s card", d.kind)
            try:
                view.error(wording.card_failed(d.kind, e, s.name))
            except Exception:
                log.exception("could not show that the card failed")
        s.notify()
        self.referee.review(d)  # a decider, or an unattended rule, may decide it now

    def _meter_while_open(self, d: PlanDecision) -> None:
        """Read the context meter once ``d`` has waited :data:`METER_DELAY` (not if decided)."""
        number = self.s.state.turns

        def read() -> None:
            if not d.done:
                self.runner.meter.soon(number)
        try:
            asyncio.get_running_loop().call_later(METER_DELAY, read)
        except RuntimeError:  # no loop (a decision made by hand): at once, as before
            read()

    def _decided(self, d: Decision) -> None:
        self.s.emit(d.decided_event())
        turn = self.runner.cli_turn or self.runner.turn
        if isinstance(d, PlanDecision) and d.fresh and d.approved_plan is not None:
            if turn is not None:  # it ends as handed over, not as failed
                turn.handed_over = True
            self.start_fresh(d)  # the plan runs in a new conversation (handoff)
        if isinstance(d, PlanDecision) and d.outcome is not None and d.outcome.back_to:
            h = d.handoff  # for this plan only: these turns carry it out (agent/plan_scope)
            self.modes.scope.begin([turn, *([h.clear_turn, h.turn] if h else [])])

    def decision_closed(self, d: Decision) -> None:
        self.s.notify()

    def end_decisions(self, by: Actor, *, only: Decision | None = None) -> None:
        self.s.end_decisions(by, only=only)

    def note_refusal(self, tool: str, tool_input: dict[str, Any]) -> None:
        target = tool_input.get("file_path") or tool_input.get("command") or ""
        self.s.emit(ev.ErrorEvent(kind="plan_refusal",
                                  message=f"refused {tool} {target}".strip()))
        self.s.marker(wording.plan_refused(tool))

    def note_empty_plan(self) -> None:
        self.s.emit(ev.ErrorEvent(kind="empty_plan", message="ExitPlanMode without a plan"))
        self.s.marker(wording.EMPTY_PLAN)

    async def leaving_plan(self, mode: str) -> None:
        await self.modes.leaving_plan(mode)

    def note_gate_refusal(self, kind: str, tool: str, tool_input: dict[str, Any],
                          marker: str) -> None:
        target = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        self.s.emit(ev.ErrorEvent(kind=kind, message=f"refused {tool} {target}".strip()))
        self.s.marker(marker)
