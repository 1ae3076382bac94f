"""How full the context window is: the CLI's ``get_context_usage`` (its ``/context``), read
after each turn and while a plan card waits (docs/cli.md#context: it costs no model request and
answers in about 20 ms, also while the CLI waits for the card's answer; the first read then is
heavier, so it waits a second: agent/gate_host.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

CONTEXT_TIMEOUT = 5.0
"""Seconds the measurement after a turn may take; it is skipped after that (never fails a
turn)."""


@dataclass(frozen=True)
class ContextCategory:
    name: str
    tokens: int
    kind: str = "used"
    """used, deferred, buffer or free (the CLI's ``kind``)."""


@dataclass(frozen=True)
class ContextUsage:
    """One reading of the context window."""

    total_tokens: int
    max_tokens: int
    percentage: float
    model: str | None = None
    categories: tuple[ContextCategory, ...] = ()
    turn: int = 0
    """The turn after which it was read."""
    at: float = field(default_factory=time.time)
    conversation: str | None = None
    """The CLI's session id it was read in (start fresh begins a new one)."""
    peak: float = 0.0
    """The highest percentage read in this conversation."""
    before: float | None = None
    """Just after start fresh: the planning conversation's peak (the label shows the drop)."""
    shown_for: int = 0
    """Readings since the drop (it shows through the plan's first turn, then goes)."""

    @classmethod
    def from_cli(cls, data: dict[str, Any], turn: int = 0,
                 conversation: str | None = None) -> ContextUsage:
        """From the CLI's answer (keys as measured: totalTokens, maxTokens, percentage,
        categories with name, tokens, kind)."""
        total = _int(data.get("totalTokens"))
        most = _int(data.get("maxTokens"))
        pct = data.get("percentage")
        if not isinstance(pct, int | float) or isinstance(pct, bool):
            pct = 100.0 * total / most if most else 0.0
        cats = tuple(
            ContextCategory(str(c.get("name") or c.get("id") or "?"), _int(c.get("tokens")),
                            str(c.get("kind") or ("deferred" if c.get("isDeferred") else "used")))
            for c in data.get("categories") or () if isinstance(c, dict))
        model = data.get("model")
        return cls(total, most, float(pct), str(model) if model else None, cats, turn,
                   conversation=conversation)

    def after(self, prev: ContextUsage | None) -> ContextUsage:
        """This reading, knowing the one before: the conversation's peak, and the drop when
        the conversation changed (start fresh: agent/handoff.py)."""
        if prev is None or prev.conversation is None or self.conversation is None:
            return replace(self, peak=self.percentage)
        if prev.conversation != self.conversation:
            return replace(self, peak=self.percentage, before=prev.peak)
        keep = prev.before is not None and prev.shown_for < 1
        return replace(self, peak=max(prev.peak, self.percentage),
                       before=prev.before if keep else None,
                       shown_for=prev.shown_for + 1 if keep else 0)

    @property
    def label(self) -> str:
        """The control bar's words: ``ctx 12%``; just after start fresh, ``ctx 9% → 3%``."""
        now = _pct(self.percentage)
        if self.before is not None and self.before > self.percentage:
            return f"ctx {_pct(self.before)}% → {now}%"
        return f"ctx {now}%"

    def lines(self) -> list[str]:
        """The categories, one line each (plain text)."""
        head = (f"{self.total_tokens:,} of {self.max_tokens:,} tokens ({self.percentage:g}%)"
                + (f", model {self.model}" if self.model else ""))
        if self.before is not None:
            head += f"; started fresh: the planning conversation held {self.before:g}%"
        return [head, *(f"{c.name}: {c.tokens:,} tokens" + (f" ({c.kind})" if c.kind != "used"
                                                             else "")
                        for c in self.categories)]


def _pct(p: float) -> str:
    return "<1" if 0 < p < 1 else f"{p:.0f}"


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0
