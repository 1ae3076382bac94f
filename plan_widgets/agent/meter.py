"""The context meter: how full the context window is, read from the CLI in the background
after each turn, at a compaction, and once a plan card has waited (agent/gate_host.py). What
a reading holds: agent/context.py; what it costs the CLI: docs/cli.md#context.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .context import CONTEXT_TIMEOUT, ContextUsage
from .ports import SessionPort
from .tasks import spawn

log = logging.getLogger("plan_widgets")


class Meter:
    """One session's latest reading, and the reading in flight (at most one)."""

    def __init__(self, session: SessionPort) -> None:
        self.s = session
        self.now: ContextUsage | None = None
        """How full the context window was at the last reading (None before one)."""
        self._reading: asyncio.Task[Any] | None = None

    def soon(self, number: int) -> None:
        """Read it in the background (nothing waits for it); a reading in flight is dropped."""
        self.stop()
        self._reading = spawn(self.read(number))

    def stop(self) -> None:
        """The CLI goes away (a close, a sleep): drop the reading in flight. Its request is
        never answered once the CLI's stdin is closed, so it waited out its timeout
        (measured: a session closed after a turn left it running 3.7 s after ``close()``
        returned; tests/test_plan_life.py)."""
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None

    async def read(self, number: int) -> ContextUsage | None:
        """Read it now, after turn ``number`` (bounded: ``CONTEXT_TIMEOUT``; a failure only
        leaves the meter as it was)."""
        s = self.s
        client = s.client
        if client is None or s.dead or s.closed or not hasattr(client, "get_context_usage"):
            return self.now
        # the conversation it is asked in: start fresh changes the session's id while a
        # reading of the planning conversation may still be on its way, and that reading
        # taken as the new one's would count against the drop's lifetime (`after`)
        conversation = s.session_id
        try:
            data = await asyncio.wait_for(client.get_context_usage(), CONTEXT_TIMEOUT)
            self.now = ContextUsage.from_cli(dict(data), number, conversation).after(self.now)
        except Exception as e:  # noqa: BLE001 - a meter must never fail the session
            log.debug("context usage after turn %s: %r", number, e)
            return self.now
        s.notify()
        return self.now
