"""The kernel's cap on live CLIs (``ClaudeMagics.max_live_sessions``).

Each live session holds one CLI (about 200-400 MB). When a session would start (or wake)
past the cap, the session that has been idle longest is put to sleep (its CLI exits; its next
turn resumes it transparently, :mod:`plan_widgets.agent.idle`), so nothing the user sees is
lost. Only when every live session is busy (a turn running, a decision waiting, an agent
running) is the new one refused, in one line naming the sessions that hold the CLIs.

No cap by default (0): the idle timeout already bounds what idle sessions hold, and a refusal
the user never asked for would surprise; an administrator sets the cap for a crowded machine
(docs/deploy.md). A session woken by a cell counts as starting; one woken by ``session.ask``
from code is not held to the cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.errors import OptionError

if TYPE_CHECKING:
    from ..agent.session import Session


def cap() -> int:
    """The cap from ``%config ClaudeMagics.max_live_sessions`` (0: none)."""
    from .policy import magics

    m = magics()
    return int(m.max_live_sessions) if m is not None else 0


def holds_cli(s: Session) -> bool:
    """Whether ``s`` holds a CLI now (or is starting one)."""
    return not (s.closed or s.dead or s.leaving)


def make_room(sessions: list[Session], starting: str) -> Session | None:
    """Before the session ``starting`` starts (or wakes): if the cap is reached, put the
    longest-idle other session to sleep and return it; none idle: OptionError."""
    limit = cap()
    live = [s for s in sessions if holds_cli(s) and s.name != starting]
    if not limit or len(live) < limit:
        return None
    idle = sorted((s for s in live if s.may_sleep()),
                  key=lambda s: s.last_active)
    if idle and idle[0].sleep("cap"):
        print(f"Session {idle[0].name!r} was idle longest: its CLI closes, to keep within "
              f"ClaudeMagics.max_live_sessions = {limit} (its next cell resumes it).")
        return idle[0]
    names = ", ".join(repr(s.name) for s in live)
    raise OptionError(
        f"{len(live)} Claude CLIs already run in this kernel, the limit "
        f"(ClaudeMagics.max_live_sessions = {limit}), and none is idle: {names}; stop one "
        "(%claude stop --session NAME) or wait for its turn to end")
