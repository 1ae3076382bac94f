"""How full the context window is: the CLI's ``get_context_usage`` (its ``/context``), read
after each turn (docs/cli.md#context: it costs no model request and answers in about 20 ms).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
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

    @classmethod
    def from_cli(cls, data: dict[str, Any], turn: int = 0) -> ContextUsage:
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
        return cls(total, most, float(pct), str(model) if model else None, cats, turn)

    @property
    def label(self) -> str:
        """The control bar's words: ``ctx 12%``."""
        p = self.percentage
        return f"ctx {'<1' if 0 < p < 1 else f'{p:.0f}'}%"

    def lines(self) -> list[str]:
        """The categories, one line each (plain text)."""
        head = (f"{self.total_tokens:,} of {self.max_tokens:,} tokens ({self.percentage:g}%)"
                + (f", model {self.model}" if self.model else ""))
        return [head, *(f"{c.name}: {c.tokens:,} tokens" + (f" ({c.kind})" if c.kind != "used"
                                                             else "")
                        for c in self.categories)]


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0
