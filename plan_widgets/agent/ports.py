"""What a session's helpers need of it, as small protocols: they never import the session.

The :class:`~plan_widgets.agent.session.Session` composes its helpers (the runner, the
lifecycle, the rewinder, the gate's host, mode tracking) and hands each one itself as a
:class:`SessionPort`, plus the sibling helpers it works with. A helper that needs a little more
of the session (the lifecycle: ``die``) says so in a protocol of its own, next to it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Protocol

from .. import model as ev
from ..model.options import SessionOptions
from ..store import EventLog
from .decisions import Decision
from .seam import AgentClient
from .turn import TurnView


class SessionPort(Protocol):
    """The session as its helpers see it: who it is, its options and folded state, the event
    stream (``emit`` logs and folds, ``notify`` wakes waiters), and bounded control requests
    to the CLI."""

    session_id: str
    """The conversation's id (a start fresh moves the session to a new one)."""

    @property
    def name(self) -> str: ...
    @property
    def options(self) -> SessionOptions: ...
    @property
    def state(self) -> ev.SessionState: ...
    @property
    def dead(self) -> str | None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def connected(self) -> bool: ...
    @property
    def client(self) -> AgentClient | None: ...
    @property
    def cli_env(self) -> Mapping[str, str]: ...
    @property
    def pending(self) -> Decision | None: ...

    def emit(self, event: ev.Event) -> ev.Event: ...
    def notify(self) -> None: ...
    def marker(self, text: str) -> None: ...
    def check_alive(self) -> None: ...
    def update_options(self, **changes: Any) -> None: ...
    def between_cells_view(self, title: str) -> TurnView: ...
    async def control(self, aw: Awaitable[Any], what: str) -> Any: ...
    async def next_change(self, tick: float | None = None) -> None: ...


class LogOwner(Protocol):
    """Who holds the session's event log (the lifecycle); a start fresh swaps it."""

    log: EventLog | None
