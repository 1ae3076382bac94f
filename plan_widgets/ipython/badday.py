"""``%claude compact [INSTRUCTIONS]`` and ``%claude mcp``; the lines ``%claude status`` and
``%claude context`` add about the MCP servers and the last compaction (docs/cli.md#bad-day).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..agent.wording import compaction_line
from ..model.errors import OptionError


def compact_arguments(p: argparse.ArgumentParser) -> None:
    p.prefix_chars = ""  # the instructions are words, whatever they start with
    p.add_argument("instructions", nargs="*")


def compact(args: argparse.Namespace) -> None:
    """Compact the conversation now: the same as a ``%%claude`` cell ``/compact ...`` (the
    cell magic's own way in; the turn shows in this cell)."""
    s = args.live
    if s.closed or s.dead:
        raise OptionError(f"{s.name} has ended: nothing to compact (%claude resume "
                          f"{s.session_id} continues it)")
    if args.config is None:
        raise OptionError("%claude compact needs the extension loaded (%load_ext plan_widgets)")
    words = " ".join(args.instructions or ())
    line = f"--session {s.name}" if s.name != "default" else ""
    args.config.claude(line, f"/compact {words}".strip())


def mcp(args: argparse.Namespace) -> None:
    """The session's MCP servers, with their status and errors."""
    s = args.live
    servers = s.state.mcp
    if not servers:
        print(f"{s.name}: no MCP servers reported (the CLI lists them when it starts)")
        return
    print(f"{s.name}: {len(servers)} MCP server{'s' if len(servers) != 1 else ''}")
    for name, v in sorted(servers.items()):
        err = f" — {v.get('error')}" if v.get("error") else ""
        print(f"  {name}: {v.get('status')}{err}")


def status_lines(s: Any) -> list[str]:
    """What ``%claude status`` adds: a retry or compaction under way, MCP servers in
    trouble, the last compaction."""
    out = []
    health = getattr(getattr(s, "runner", None), "health", None)
    if health is not None and health.bar_note:
        out.append(f"now: {health.bar_note}")
    bad = [(n, v) for n, v in s.state.mcp.items() if v.get("status") in ("failed", "needs-auth")]
    if bad:
        out.append("MCP servers in trouble: " + "; ".join(
            f"{n} {v.get('status')}" + (f" ({v.get('error')})" if v.get("error") else "")
            for n, v in bad) + " (%claude mcp lists them all)")
    last = compaction(s)
    if last:
        out.append(last)
    return out


def compaction(s: Any) -> str:
    """``last compacted 4 min ago, in turn 3: conversation compacted: 152k → 18k tokens,
    manual`` (or "" if never)."""
    c = s.state.last_compaction
    if not c:
        return ""
    ago = max(0.0, time.time() - float(c.get("ts") or time.time()))
    when = f"{ago / 60:.0f} min ago" if ago >= 90 else f"{ago:.0f} s ago"
    return (f"last compacted {when}, in turn {c.get('turn')}: "
            + compaction_line(str(c.get("trigger")), c.get("pre_tokens"), c.get("post_tokens")))
