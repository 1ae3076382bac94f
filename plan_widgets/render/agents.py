"""Subagents in words: their state in one line, a refusal's reason, who asks on a card.

Plain text for every view (the widgets escape it, the terminal makes it terminal-safe): a
subagent's description and summary are the model's words.
"""

from __future__ import annotations

import time
from typing import Any

from .markdown import summarize

AGENT_TOOLS = ("Agent", "Task")
"""The tools that launch a subagent (``Task``: older CLIs' name)."""


def count(n: int, unit: str) -> str:
    """``1234, "tokens"`` → ``1.2k tokens``."""
    shown = f"{n / 1000:.1f}k" if n >= 1000 else str(n)
    return f"{shown} {unit}"


def seconds(s: float) -> str:
    """Elapsed time in a few characters: ``42 s``, ``3 min 05 s``."""
    if s < 60:
        return f"{s:.0f} s"
    m, rest = divmod(int(s), 60)
    return f"{m} min {rest:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def first_line(content: Any, limit: int = 160) -> str:
    """The first non-empty line of a tool's result (plain text, bounded): the CLI's reason
    when it refused the tool. The CLI wraps refusals in ``<tool_use_error>`` tags."""
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) if isinstance(c, dict) else str(c)
                           for c in content)
    text = str(content or "").replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return summarize(line, limit)


def error_state(content: Any) -> str:
    """A failed tool line's ending: ✗ and the first line of why (plain text)."""
    why = first_line(content)
    return f" ✗ {why}" if why else " ✗"


def agent_state(record: Any, now: float | None = None) -> str:
    """A subagent's state in one line (plain text): running, or how it ended."""
    if record is None:
        return ""
    bits = []
    if record.running:
        bits.append("running in background" if record.background else "running")
        if record.last_tool:
            bits.append(f"last tool {record.last_tool}")
    elif record.status != "completed":
        bits.append(str(record.status))
    if record.tool_uses:
        bits.append(count(record.tool_uses, "tools"))
    if record.tokens:
        bits.append(count(record.tokens, "tokens"))
    took = (record.duration_ms / 1000 if record.duration_ms and not record.running
            else record.elapsed(now if now is not None else time.time()))
    if took >= 1:
        bits.append(seconds(took))
    return " · ".join(bits)


def asker(d: Any) -> str | None:
    """Who asks, when it is a subagent: ``Agent "Write a file" asks`` (None for the main
    agent: a decision's ``agent`` is the asking subagent's description)."""
    name = getattr(d, "agent", None)
    return f'Agent "{summarize(name, 80)}" asks' if name else None
