"""Subagents in words: their state in one line, a refusal's reason, who asks on a card.

Plain text for every view (the widgets escape it, the terminal makes it terminal-safe): a
subagent's description and summary are the model's words.
"""

from __future__ import annotations

import json
import re
import textwrap
import time
from typing import Any

from .cli_words import for_the_page
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
    when it refused the tool. The CLI wraps refusals in ``<tool_use_error>`` tags. A text
    written for the model reads as the page's words (:mod:`.cli_words`)."""
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) if isinstance(c, dict) else str(c)
                           for c in content)
    text = str(content or "").replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    said = for_the_page(text)  # words written for the model: the page's own instead
    if said is not None:
        return said
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
        bits.append(status_word(str(record.status)))
    if record.tool_uses:
        bits.append(count(record.tool_uses, "tools"))
    if record.tokens:
        bits.append(count(record.tokens, "tokens"))
    took = (record.duration_ms / 1000 if record.duration_ms and not record.running
            else record.elapsed(now if now is not None else time.time()))
    if took >= 1:
        bits.append(seconds(took))
    return " · ".join(bits)


_STATUS_WORDS = {"killed": "stopped"}
"""The CLI's task status as the user reads it (a stopped agent is "killed" to the CLI)."""


def status_word(status: str) -> str:
    return _STATUS_WORDS.get(status, status)


def agent_said(record: Any) -> str:
    """An ended agent's summary, unless it only repeats the agent's name (the CLI's summary
    of a stopped agent is its description): one name on a line, not two."""
    said = " ".join(str(getattr(record, "summary", "") or "").split())
    name = " ".join(str(getattr(record, "description", "") or "").split())
    return "" if said == name else said


_USED = re.compile(r"<tools-used-before-summary>.*?</tools-used-before-summary>\s*", re.S)
_USAGE = re.compile(r"^<usage>.*?</usage>\s*$", re.S | re.M)
_AGENT_ID = re.compile(r"^agentId: \S+ \(.*$", re.M)
_FOLLOWS = "The report follows:"
BACKGROUND_LAUNCH = "Started in the background; its report comes when it finishes."


def agent_report(text: str) -> str:
    """What an Agent call returned, as the agent reported it: without the CLI's framing for
    the model (CLI 2.1.332: ``[Subagent hand-back] … The report follows:`` then the report
    indented by two spaces, then ``agentId: … (use SendMessage …)`` and ``<usage>``; a
    background launch is ``Async agent launched successfully …`` with instructions for the
    model). Text in no known frame is returned as it is."""
    if text.lstrip().startswith("Async agent launched"):
        return BACKGROUND_LAUNCH
    body = _USED.sub("", text)
    if "[Subagent hand-back]" in body and _FOLLOWS in body:
        body = body.split(_FOLLOWS, 1)[1]
    body = _USAGE.sub("", _AGENT_ID.sub("", body))
    return textwrap.dedent(body.strip("\n")).strip()


def asker(d: Any) -> str | None:
    """Who asks, when it is a subagent: ``Agent "Write a file" asks`` (None for the main
    agent: a decision's ``agent`` is the asking subagent's description)."""
    name = getattr(d, "agent", None)
    return f'Agent "{summarize(name, 80)}" asks' if name else None


def shown_result(content: Any, is_error: bool) -> str:
    """A tool result's text as a tool line's body shows it: none for a refusal written for
    the model (the line's ending already says it in the page's words, :mod:`.cli_words`)."""
    text = result_text(content)
    return "" if is_error and for_the_page(text) is not None else text


def result_text(content: Any) -> str:
    """A tool result's text (its text blocks; other blocks as short JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                out.append(str(item.get("text", "")))
            else:
                out.append(json.dumps(item, default=str)[:500])
        return "\n".join(out)
    return str(content)
