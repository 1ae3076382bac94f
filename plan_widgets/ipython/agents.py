"""``%claude agents``: the session's subagents as a table, running ones first.

The same as ``session.agents`` in Python and the control bar's list: each agent's
description, status, elapsed time, last tool, tokens and (once ended) its result summary,
and its id (what ``session.stop_agent(id)`` takes). Descriptions and summaries are the
model's words: the table escapes every cell.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..render.agents import agent_said, count, seconds, status_word
from ..render.markdown import summarize
from .output import show_table

HEAD = ("agent", "status", "elapsed", "last tool", "tokens", "summary", "id")


def rows(agents: list[Any], now: float | None = None) -> list[tuple[str, ...]]:
    """The table's rows: running agents first (oldest first), then the ended ones (newest
    first)."""
    now = time.time() if now is None else now
    running = [a for a in agents if a.running]
    ended = sorted((a for a in agents if not a.running), key=lambda a: a.ended or 0,
                   reverse=True)
    out: list[tuple[str, ...]] = []
    for a in running + ended:
        took = (a.duration_ms / 1000 if a.duration_ms and not a.running else a.elapsed(now))
        status = status_word(str(a.status)) + (" (background)" if a.background and a.running
                                                 else "")
        out.append((summarize(a.description or "subagent", 60), status, seconds(took),
                    a.last_tool or "", count(a.tokens, "").strip() if a.tokens else "",
                    summarize(agent_said(a), 100), a.id))
    return out


def agents(args: argparse.Namespace) -> None:
    """The session's subagents; "no agents" when it had none."""
    s = args.live
    found = list(s.agents)
    if not found:
        print(f"{s.name}: no agents")
        return
    running = sum(1 for a in found if a.running)
    show_table(HEAD, rows(found),
               caption=f"{s.name}: {running} running, {len(found) - running} ended "
                       "(stop one: await session.stop_agent(id))")
