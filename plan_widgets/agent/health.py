"""A bad day, shown while it happens: API retries and rate limits, model fallbacks,
compaction, the MCP servers' health, and messages this version does not know.

The runner hands these signals here (:data:`HANDLERS`). Each is an event in the log and a line
in the turn it happened in; a retry or a compaction is first a *live line* (a view's optional
``live_line`` hook, updated in place: a countdown to the next try), then a quiet line that
stays in the finished turn (``live_line_done``). The control bar reads :attr:`Health.bar_note`
and :attr:`Health.mcp_trouble`. Measured shapes: docs/cli.md#bad-day.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import model as ev
from . import signals as sig
from . import wording
from .cli_system import retry_reason
from .tasks import spawn
from .turn import call_hook as _hook

log = logging.getLogger("plan_widgets")
MCP_SETTLE = (0.2, 1.0, 4.0, 15.0)
"""Seconds between asking the CLI again about pending MCP servers (bounded)."""
MCP_TIMEOUT = 5.0
TROUBLE = ("failed", "needs-auth")


@dataclass
class _Retry:
    turn: Any
    started: float
    attempt: int = 0
    max_retries: int | None = None
    deadline: float = 0.0
    reasons: list[str] = field(default_factory=list)


class Health:
    """What the CLI says about its own health, for one session (see the module's doc)."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.s = runner.s
        self.retry: _Retry | None = None
        """The retry under way (None once the stream resumed or the turn ended)."""
        self.compacting: Any = None
        """The turn whose compaction runs now (its live line is up), else None."""
        self._tick: asyncio.TimerHandle | None = None
        self._seen: set[str] = set()  # compact_boundary uuids (the CLI may send one twice)
        self._settling: asyncio.Task[Any] | None = None
        self._boundary_at = -10.0  # when the last compact_boundary came (monotonic)

    # -- what the bar shows --------------------------------------------------------------------
    @property
    def bar_note(self) -> str | None:
        """``retrying 2/10…`` or ``compacting…`` while one runs, else None."""
        r = self.retry
        if r is not None:
            return f"retrying {r.attempt}/{r.max_retries}…" if r.max_retries else "retrying…"
        return "compacting…" if self.compacting is not None else None

    def mcp_trouble(self) -> list[tuple[str, str, str | None]]:
        """The MCP servers that failed or need authentication: (name, status, error)."""
        return [(n, str(v.get("status")), v.get("error")) for n, v in self.s.state.mcp.items()
                if v.get("status") in TROUBLE]

    def _turn(self) -> Any:
        return self.runner.cli_turn or self.runner.turn

    def _number(self) -> int:
        turn = self._turn()
        return turn.number if turn is not None else 0

    def _line(self, text: str, between: bool = True) -> None:
        """A quiet line in the turn running now; between turns a view of its own, or (not
        ``between``: an unknown message, a notice, which could come often) only the log."""
        turn = self._turn()
        if turn is None and not between:
            log.info("between turns, the CLI said: %s", text)
            return
        view = turn.view if turn is not None else self.s.between_cells_view(text)
        view.marker(text)

    # -- retries -------------------------------------------------------------------------------
    def on_retry(self, m: sig.ApiRetry) -> None:
        turn = self._turn()
        reason = retry_reason(m.status, m.error)
        self.s.emit(ev.ApiRetried(turn=self._number(), reason=reason, attempt=m.attempt,
                                  max_retries=m.max_retries, delay_ms=m.delay_ms,
                                  status=m.status))
        if turn is None:
            return
        turn.drop_unfinished()  # a cut stream: what it showed goes; the retry sends it again
        r = self.retry
        if r is None or r.turn is not turn:
            self.ended()
            r = self.retry = _Retry(turn, time.monotonic())
        r.attempt, r.max_retries = m.attempt, m.max_retries
        r.deadline = time.monotonic() + (m.delay_ms or 0) / 1000
        r.reasons.append(reason)
        if self._tick is not None:  # the last attempt's countdown ends here
            self._tick.cancel()
        self._countdown()
        self.s.notify()

    def _countdown(self) -> None:
        """Show the retry line, and again each second until the next try."""
        self._tick = None
        r = self.retry
        if r is None:
            return
        left = r.deadline - time.monotonic()
        text = wording.retry_line(r.reasons[-1], r.attempt, r.max_retries, left)
        _hook(r.turn.view, "live_line", text)
        if left >= 0.5:
            self._tick = asyncio.get_running_loop().call_later(
                min(1.0, left - int(left) or 1.0), self._countdown)

    def resumed(self) -> None:
        """The stream resumed (or the turn ended): the retry line becomes one quiet line."""
        r = self.retry
        if r is None:
            return
        self.retry = None
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        took = time.monotonic() - r.started
        _hook(r.turn.view, "live_line_done",
              wording.retried_line(r.attempt, r.reasons, took))
        self.s.notify()

    def ended(self) -> None:
        """A turn ended: nothing of it stays live."""
        self.resumed()
        turn, self.compacting = self.compacting, None
        if turn is not None:
            _hook(turn.view, "live_line_done", None)

    def on_rate_limit(self, m: sig.RateLimit) -> None:
        if m.status == "allowed":
            return  # within the limit: nothing to say
        text = wording.rate_limit_line(m.status, m.resets_at, m.limit_type)
        self.s.emit(ev.ApiRetried(turn=self._number(), reason=text))  # (when: in the text)
        self._line(text)

    def on_fallback(self, m: sig.Fallback) -> None:
        self.s.emit(ev.ModelFellBack(turn=self._number(), kind=m.kind, to_model=m.to_model,
                                     from_model=m.from_model, reason=m.reason))
        self._line(wording.fallback_line(m.to_model, m.from_model, m.reason))
        if m.to_model:
            self.runner.modes.saw_model(m.to_model)

    # -- compaction ----------------------------------------------------------------------------
    def on_compacting(self, m: sig.Compacting) -> None:
        turn = self._turn()
        if m.active:
            if time.monotonic() - self._boundary_at < 2.0:
                return  # its boundary came first (out of order): it is over already
            if turn is not None and self.compacting is None:
                self.compacting = turn
                _hook(turn.view, "live_line", wording.COMPACTING)
        elif m.result == "failed":
            self._compaction_over(wording.compact_failed(m.error))
        self.s.notify()

    def on_compacted(self, m: sig.Compacted) -> None:
        if m.uuid is not None:
            if m.uuid in self._seen:
                return  # the same boundary again
            self._seen.add(m.uuid)
        self.s.emit(ev.Compacted(turn=self._number(), trigger=m.trigger,
                                 pre_tokens=m.pre_tokens, post_tokens=m.post_tokens))
        self._boundary_at = time.monotonic()
        self._compaction_over(wording.compaction_line(m.trigger, m.pre_tokens, m.post_tokens))
        # the meter at once (in the background, bounded), not after the turn
        self.runner.meter.soon(self.s.state.turns)

    def _compaction_over(self, text: str) -> None:
        turn, self.compacting = self.compacting, None
        if turn is not None:
            _hook(turn.view, "live_line_done", text)
        else:
            self._line(text)
        self.s.notify()

    # -- MCP servers ---------------------------------------------------------------------------
    def on_mcp(self, m: sig.McpServers) -> None:
        self._record(m)
        # init says "failed" without the error (measured): get_mcp_status has it; and
        # pending servers settle in the background
        known = self.s.state.mcp
        ask = any(status == "pending" or (status in TROUBLE and not known[n].get("error"))
                  for n, status, _e in m.servers)
        if ask and (self._settling is None or self._settling.done()):
            self._settling = spawn(self._settle())

    def _record(self, m: sig.McpServers) -> None:
        """An event for each server whose status (or error) changed."""
        known = self.s.state.mcp
        for name, status, error in m.servers:
            old = known.get(name)
            if old is None or old.get("status") != status or (error and old.get("error") != error):
                self.s.emit(ev.McpChanged(name=name, status=status, error=error))

    async def _settle(self) -> None:
        """Ask the CLI again (``get_mcp_status``, bounded) while servers are pending."""
        for delay in MCP_SETTLE:
            await asyncio.sleep(delay)
            client = self.s.client
            ask = getattr(client, "mcp_status", None)
            if ask is None or self.s.dead or self.s.closed:
                return
            with contextlib.suppress(Exception):
                found = await asyncio.wait_for(ask(), MCP_TIMEOUT)
                if found is not None:
                    self._record(found)
            if not any(v.get("status") == "pending" or (
                    v.get("status") in TROUBLE and not v.get("error"))
                    for v in self.s.state.mcp.values()):
                return

    # -- anything else -------------------------------------------------------------------------
    def on_unknown(self, m: sig.Unknown) -> None:
        self.s.emit(ev.CliUnknown(kind=m.kind, detail=m.detail))
        self._line(wording.unknown_message(m.kind, m.detail), between=False)


def _message_ended(runner: Any) -> None:
    """A streamed message is complete: the events held for it are logged (turn.hold)."""
    if runner.cli_turn is not None:
        runner.cli_turn.message_ended()


HANDLERS: dict[type, Callable[[Any, Any], None]] = {
    sig.ApiRetry: lambda r, m: r.health.on_retry(m),
    sig.RateLimit: lambda r, m: r.health.on_rate_limit(m),
    sig.Fallback: lambda r, m: r.health.on_fallback(m),
    sig.Compacting: lambda r, m: r.health.on_compacting(m),
    sig.Compacted: lambda r, m: r.health.on_compacted(m),
    sig.McpServers: lambda r, m: r.health.on_mcp(m),
    sig.Unknown: lambda r, m: r.health.on_unknown(m),
    sig.Notice: lambda r, m: r.health._line(m.text, between=False),
    sig.MessageEnd: lambda r, m: _message_ended(r),
}
"""The runner's handlers for these signals (merged into its table)."""
