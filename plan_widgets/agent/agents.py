"""The session's subagents: launched by ``Agent`` calls, followed through the CLI's task
messages, stoppable, and ended for sure when the CLI goes.

MEASURED (CLI 2.1.332, SDK 0.2.189): an ``Agent`` call with ``run_in_background`` returns
"Async agent launched" at once and the user's turn ends; the CLI then sends
``task_started`` (``tool_use_id``: the Agent call), one ``task_progress`` per tool the agent
uses (description, last tool, tokens), and at the end ``task_updated`` (status) and
``task_notification`` (status, summary, usage). The subagent's own messages carry the Agent
call's id as ``parent_tool_use_id``; its permission requests carry its task id as
``agent_id``. When it ends while nothing runs, the CLI starts a turn by itself to tell the
model (a self-started turn: :mod:`runner`); when a turn runs, the notification goes into it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import model as ev
from . import signals as sig
from . import wording
from .turn import Turn

log = logging.getLogger("plan_widgets")
AGENT_TOOLS = frozenset({"Agent", "Task"})
"""The tool names that launch a subagent (``Task`` is the older CLIs' name)."""


class Agents:
    """Where each subagent is shown (the turn whose ``Agent`` line launched it), and its
    events. ``emit`` logs and folds an event; ``state`` reads the folded state."""

    def __init__(self, emit: Callable[[Any], Any], state: Callable[[], Any]) -> None:
        self._emit = emit
        self._state = state
        self.homes: dict[str, Turn] = {}
        """The turn that shows each ``Agent`` call, by its tool use id."""
        self.notices: deque[str] = deque(maxlen=20)
        """Agents that ended and were not yet named by a self-started turn's title."""

    # -- where an agent is shown ---------------------------------------------------------------
    def launched(self, turn: Turn, tool_use_id: str) -> None:
        """``turn`` shows the ``Agent`` call ``tool_use_id``: its subagent's output goes there."""
        self.homes[tool_use_id] = turn

    def home(self, parent: str | None) -> Turn | None:
        """The turn that shows the Agent call ``parent``."""
        return self.homes.get(parent) if parent else None

    def record(self, agent_id: str | None) -> ev.AgentRecord | None:
        if not agent_id:
            return None
        return next((a for a in self._state().agents if a.id == agent_id), None)

    def home_of(self, agent_id: str | None) -> Turn | None:
        """The turn that launched the subagent ``agent_id``."""
        rec = self.record(agent_id)
        return self.home(rec.tool_use_id) if rec is not None else None

    # -- the CLI's task messages ----------------------------------------------------------------
    def started(self, m: sig.AgentStart, turn_number: int) -> None:
        if self.record(m.agent_id) is not None:
            return
        home = self.home(m.tool_use_id)
        self._emit(ev.AgentStarted(
            agent_id=m.agent_id, tool_use_id=m.tool_use_id, description=m.description,
            subagent_type=m.subagent_type, background=m.background, prompt=m.prompt,
            turn=home.number if home is not None else turn_number))
        self._updated(m.agent_id)

    def stepped(self, m: sig.AgentStep) -> bool:
        """Progress of a known running agent (False: an agent we do not know)."""
        rec = self.record(m.agent_id)
        if rec is None:
            return False
        if rec.running:
            self._emit(ev.AgentProgress(
                agent_id=m.agent_id, activity=m.activity, last_tool=m.last_tool,
                tokens=m.tokens, tool_uses=m.tool_uses, duration_ms=m.duration_ms))
            self._updated(m.agent_id)
        return True

    def ended(self, m: sig.AgentEnd) -> bool:
        """A known agent ended (False: an agent we do not know). The CLI says it twice
        (``task_updated`` and ``task_notification``): the second adds the summary only."""
        rec = self.record(m.agent_id)
        if rec is None:
            return False
        if rec.running:
            self._emit(ev.AgentEnded(
                agent_id=m.agent_id, status=_status(m.status), summary=m.summary,
                tokens=m.tokens, tool_uses=m.tool_uses, duration_ms=m.duration_ms))
            if rec.background:
                self.notices.append(wording.agent_finished(rec.description, m.status))
        elif m.summary and not rec.summary:  # the notification after task_updated
            self._emit(ev.AgentEnded(agent_id=rec.id, status=_status(rec.status),
                                     summary=m.summary, tokens=m.tokens,
                                     tool_uses=m.tool_uses, duration_ms=m.duration_ms))
        self._updated(m.agent_id)
        return True

    def end_all(self, why: str) -> None:
        """The CLI is gone (exited, closed, the kernel stopped): every running agent ends as
        stopped, saying why."""
        for rec in list(self._state().running_agents):
            self._emit(ev.AgentEnded(agent_id=rec.id, status="stopped", summary=why))
            self._updated(rec.id)

    def title(self) -> str:
        """The title of a turn the CLI starts by itself: the agent that just ended, if any."""
        return self.notices.popleft() if self.notices else wording.SELF_STARTED

    def _updated(self, agent_id: str) -> None:
        rec = self.record(agent_id)
        home = self.home(rec.tool_use_id) if rec is not None else None
        if rec is None or home is None or rec.tool_use_id is None:
            return
        fn = getattr(home.view, "agent_updated", None)
        if fn is None:
            return
        try:
            fn(rec.tool_use_id, rec)
        except Exception:
            log.exception("the turn view's agent_updated failed")


_FINAL: dict[str, ev.AgentStatus] = {
    s: s for s in ("completed", "failed", "stopped", "killed")}
"""The statuses a subagent ends with, as the CLI names them."""


def _status(status: str) -> ev.AgentStatus:
    return _FINAL.get(status, "failed")
