"""Approve, start fresh: the approved plan becomes the first message of a new conversation, and
the planning conversation's context is dropped (issue 22, point 1).

What was measured (CLI 2.1.332 through claude-agent-sdk 0.2.189, against the scripted model):

- The CLI's own "Yes, clear context and ..." (its plan dialog; hidden behind the setting
  ``showClearContextOnPlanAccept``) answers ExitPlanMode with a bare deny, clears the
  conversation, and sends ``Implement the following plan:\\n\\n<plan>`` as the new first
  message in the chosen mode. The SDK has no permission answer that does this.
- ``/clear`` sent as a prompt through the SDK does the same clearing in the same CLI process:
  the CLI sends ``conversation_reset`` (the SDK's ``ConversationResetMessage``), then an
  ``init`` and a ``success`` result carrying a NEW session id, in 0.04-0.14 s. The old
  transcript stays on disk under the old id; the new one is written under the new id, so either
  can be resumed. A permission mode set before ``/clear`` stays in force after it.
  ``get_context_usage`` falls to the system prompt and tools alone.
- The other ways cost more: a new CLI process (``connect``: about 0.43 s and a second
  ~200 MB process while the old one exits) for the same outcome; ``fork_session`` copies the
  planning conversation, which is what start fresh must drop.

So: the ExitPlanMode request is denied with an interrupt (the planning turn ends, the model is
told why), the resting mode is requested at once, then ``/clear`` and the plan run as the next
two prompts. When ``/clear`` ends, its result names the new conversation: the old log gets a
``plan:handoff`` event (old id, new id, plan, mode) and closes, and the session (same name)
writes on in a new log under the new id, which begins with ``session:started`` and the same
``plan:handoff``. ``%claude sessions`` lists both; ``%claude resume`` of either works.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from .. import model as ev
from ..model.errors import SessionError
from ..store import EventLog
from .decisions import PlanDecision
from .modes import Modes
from .ports import LogOwner, SessionPort
from .tasks import spawn
from .turn import NullView, Turn, TurnView

log = logging.getLogger("plan_widgets")

FRESH_PROMPT = "Implement the following plan:\n\n{plan}"
"""The new conversation's first message: the CLI's own words for it (its plan dialog)."""
CLEAR = "/clear"
FRESH_TITLE = "Start fresh: the approved plan, in a new conversation"


class HandoffHost(SessionPort, Protocol):
    """What a start fresh needs of its session besides the shared port: to queue prompts."""

    def ask(self, prompt: str, *, view: TurnView | None = None, plan: bool = False) -> Turn: ...


class _ClearView(NullView):
    """The ``/clear`` turn's view: shows nothing; when it ends, hands the session over to the
    new conversation, before the next prompt (the plan) is sent."""

    def __init__(self, handoff: Handoff) -> None:
        self.handoff = handoff

    def finished(self, summary: str, ok: bool) -> None:
        self.handoff.cleared(ok)


class Handoff:
    """One start-fresh: from the decision approved to the new conversation's first turn."""

    def __init__(self, session: HandoffHost, modes: Modes, logs: LogOwner,
                 decision: PlanDecision, view: TurnView) -> None:
        self.s = session
        self.modes = modes
        self.logs = logs
        self.d = decision
        o = decision.outcome
        assert o is not None and o.mode is not None
        self.mode: str = o.mode
        self.plan = decision.approved_plan or decision.plan
        self.old_id = session.session_id
        self.new_id: str | None = None
        self.clear_turn = session.ask(CLEAR, view=_ClearView(self))
        self.clear_turn.counted = False  # not a turn the person sees: it takes no number
        self.turn = session.ask(FRESH_PROMPT.format(plan=self.plan), view=view)
        # its view belongs to no cell (below the newest): static once the turn ends, as every
        # view between cells (a cell's own turn goes static through its cell)
        self.turn.add_done_callback(lambda t: getattr(t.view, "turn_done", lambda: None)())
        spawn(self._leave_plan(), name="claude:handoff-mode")

    async def _leave_plan(self) -> None:
        """The resting mode, requested at once: it is in force before ``/clear`` is sent
        (a mode survives ``/clear``: measured)."""
        s = self.s
        try:
            await self.modes.leaving_plan(self.mode)
            if s.connected and not s.dead:
                await self.modes.apply(self.mode, "approval")
        except SessionError as e:
            s.emit(ev.ErrorEvent(kind="handoff", message=str(e)))

    def cleared(self, ok: bool) -> None:
        """``/clear`` ended: log the handoff, and write on in the new conversation's log."""
        s = self.s
        new_id = (self.clear_turn.result or {}).get("session_id")
        if not ok or not isinstance(new_id, str) or not new_id or new_id == self.old_id:
            why = "the CLI did not start a new conversation (/clear failed)"
            s.emit(ev.ErrorEvent(kind="handoff", message=why))
            self.turn.view.error(f"Start fresh: {why}; the plan runs in the old one.")
            return
        self.new_id = new_id
        event = s.emit(ev.PlanHandoff(decision_id=self.d.id, old_id=self.old_id,
                                      new_id=new_id, plan=self.plan, mode=self.mode))
        self._switch_log(new_id, event)
        s.marker(f"Started fresh: conversation {new_id[:8]} (was {self.old_id[:8]})")

    def _switch_log(self, new_id: str, handoff: Any) -> None:
        s = self.s
        old = self.logs.log
        if old is None:
            s.session_id = new_id
            return
        o = s.options
        new = EventLog(old.path.with_name(f"{new_id}.jsonl"))
        try:
            new.append(ev.SessionStarted(
                session_id=new_id, name=s.name, cwd=o.cwd or "", resting_mode=o.mode,
                model=s.state.model or o.model, plan_model=o.plan_model, scripted=o.scripted))
            new.append(handoff.model_copy(update={"seq": 0}))
        except Exception as e:  # the old log goes on: nothing is lost
            log.error("could not start the new conversation's log: %s", e)
            s.emit(ev.ErrorEvent(kind="handoff", message=f"new log: {e}"))
            return
        old.close()
        self.logs.log = new
        s.session_id = new_id


def start_fresh(session: HandoffHost, modes: Modes, logs: LogOwner,
                decision: PlanDecision) -> Handoff | None:
    """The user approved ``decision`` to start fresh: queue ``/clear`` and the plan."""
    if session.dead or session.closed:
        return None
    # said in the planning turn, before its end (the CLI ends it as interrupted)
    # "below": under this turn in this cell when it is the session's newest, else under the
    # newest one (widgets/follow.py); it said "below the newest cell" when it ran right here
    session.marker("Approved to start fresh: this conversation stops here; the plan runs in a "
                   "new conversation, shown below")
    view = session.between_cells_view(FRESH_TITLE)
    decision.handoff = h = Handoff(session, modes, logs, decision, view)
    return h
