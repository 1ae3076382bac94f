"""The kernel's live sessions by name: the table, and how all leave it.

Only the table: how a cell or code comes to its session (options merged, checked, a session
reused, adjusted or started) is :mod:`.obtain`; :mod:`.resume_log` reads the log a session
resumes from, :mod:`.prestart` starts the default session's CLI at ``%load_ext``.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
from typing import TYPE_CHECKING

from ..model.errors import OptionError
from ..store import resolve_session_id

log = logging.getLogger("plan_widgets")

if TYPE_CHECKING:
    from ..agent.session import Session
    from ..widgets import ControlBar

_sessions: dict[str, Session] = {}
_from_config: dict[str, set[str]] = {}
"""The options each session (by name) took from ``%config``, not from its cells."""
_bars: dict[int, ControlBar] = {}


def sessions() -> dict[str, Session]:
    """The live sessions of this kernel, by name."""
    return dict(_sessions)


def get(name: str = "default") -> Session | None:
    """The session called ``name``, if one was started."""
    return _sessions.get(name)


def taken_from_config(name: str) -> set[str]:
    """The options the session ``name`` took from ``%config``, not from its cells."""
    return _from_config.get(name, set())


def add(s: Session, config: set[str]) -> None:
    """Make ``s`` the kernel's session of its name (``config``: the options it took from
    ``%config``, not from its cells)."""
    _sessions[s.name] = s
    _from_config[s.name] = set(config)


def unregister(s: Session) -> None:
    """Take ``s`` out of the table (a pre-started session that gave way to a cell's own)."""
    _sessions.pop(s.name, None)


def interrupt(name: str) -> None:
    """The kernel's stop button stopped the agent's code outside any cell: end the turn too."""
    s = _sessions.get(name)
    if s is not None and not (s.closed or s.dead):
        s.interrupt_nowait()


def refuse_twice(name: str, sid: str) -> None:
    """One conversation, one live session: two CLIs on one transcript would fork it."""
    for other in _sessions.values():
        if other.session_id == sid and other.name != name and not (other.dead or other.closed):
            raise OptionError(f"session {sid} is running in this kernel as {other.name!r}; "
                              f"use --session {other.name}")


def resolve(prefix: str, log_dir: str | os.PathLike[str] | None) -> str | None:
    """The full id of the session ``prefix`` names, among the logs in ``log_dir`` and the
    sessions of this kernel (see :func:`plan_widgets.store.resolve_session_id`)."""
    return resolve_session_id(prefix, log_dir, also=[s.session_id for s in _sessions.values()])


def control_bar(s: Session) -> ControlBar:
    """The one control bar of a session (shown in each of its cells)."""
    from ..widgets import ControlBar

    bar = _bars.get(id(s))
    if bar is None or bar.session is not s:
        bar = ControlBar(s)
        _bars[id(s)] = bar
        # a replaced session's bar goes with it (the cells that show it keep their copy)
        live = {id(x) for x in _sessions.values()}
        for key in [k for k in _bars if k not in live and k != id(s)]:
            del _bars[key]
    return bar


async def close_all(timeout: float = 10) -> None:
    """Close every session (kernel shutdown, extension unload)."""
    live = [s for s in _sessions.values() if not s.closed]
    if live:
        await asyncio.gather(*(s.close(timeout) for s in live), return_exceptions=True)


def _cancel_pending_at_exit() -> None:
    """Kernel shutdown: pending decisions end as cancelled (never approved), in the log too.

    The CLI exits by itself once the kernel's pipes close (measured: within 3 s)."""
    for s in list(_sessions.values()):
        try:
            s.end_decisions("close")
        except Exception:  # at exit: the other sessions' decisions must still end
            log.exception("could not end the decisions of %s", s.name)


atexit.register(_cancel_pending_at_exit)
