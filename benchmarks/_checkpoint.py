"""Figure 7 (issue 13): what file checkpointing costs a turn, beside the same turn without it.

Two sessions run side by side in one process, through the product's own path
(``plan_widgets`` sessions with the real CLI and the scripted model), identical but for
``checkpointing``. Their turns are interleaved (off/on, then on/off), so a busy machine slows
both alike. Each turn is one model reply with three ``Write`` s that overwrite existing files
(the case checkpointing must back up), then "done". Reported: the median turn time of each
arm (from the turn's start to its end, the first turn of each arm left out as warm-up), the
median of the paired differences (the goal is judged on it: single turns vary far more than the
two medians differ), the CLI's own ``duration_ms``, the CLI's resident memory at the end, and
the disk the checkpoints took (``~/.claude/file-history``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from ._figures import Bench, Row, median

FILES = 3


def _script(path: Path, size: int) -> str:
    filler = ("x" * 99 + "\n") * (size // 100)
    steps = [
        {"when": {"user": "^bench"}, "repeat": True, "reply": [
            {"tool": "Write", "input": {"file_path": f"{{cwd}}/f{i}.txt",
                                        "content": "{user}\n" + filler}}
            for i in range(1, FILES + 1)]},
        {"when": {"tool_result": f"f{FILES}\\.txt"}, "repeat": True, "reply": [{"text": "done"}]},
        {"repeat": True, "reply": [{"text": "?"}]},
    ]
    path.write_text(yaml.safe_dump({"steps": steps}, sort_keys=False), encoding="utf-8")
    return str(path)


def _rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


async def _arms(b: Bench, size: int, turns: int) -> dict[str, dict[str, Any]]:
    from plan_widgets.agent.session import Session
    from plan_widgets.model.options import SessionOptions

    script = _script(b.work / f"checkpoint-{size}.yaml", size)
    sessions: dict[str, Session] = {}
    for arm, on in (("off", False), ("on", True)):
        cwd = b.fresh_dir(f"ckpt-{arm}-")
        for i in range(1, FILES + 1):
            (cwd / f"f{i}.txt").write_text("seed\n")
        sessions[arm] = Session(SessionOptions(
            name=f"ckpt-{arm}", cwd=str(cwd), scripted=script, mode="acceptEdits",
            checkpointing=on, env={"HOME": str(b.home)}, log_dir=str(cwd / ".logs")))
    out: dict[str, dict[str, Any]] = {a: {"wall": [], "cli": []} for a in sessions}
    try:
        for i in range(turns + 1):  # the first turn of each arm: warm-up
            for arm in (("off", "on") if i % 2 == 0 else ("on", "off")):
                s = sessions[arm]
                turn = s.ask(f"bench turn {i} {arm}")
                await turn.wait(120)
                done = time.monotonic()
                assert turn.ok, turn.error
                assert (Path(s.options.cwd or "") / "f1.txt").read_text().startswith(
                    f"bench turn {i} {arm}")
                if i:
                    out[arm]["wall"].append((done - (turn.started_at or done)) * 1000)
                    out[arm]["cli"].append((turn.result or {}).get("duration_ms") or 0)
                await s.wait(30)  # its context reading too, before the other arm's turn
        for arm, s in sessions.items():
            out[arm]["rss"] = _rss_mb(s.cli_pid)
            out[arm]["history"] = _du(b.home / ".claude" / "file-history" / s.session_id)
    finally:
        for s in sessions.values():
            await s.close()
    return out


def _pooled(b: Bench, size: int, batches: int, turns: int) -> dict[str, dict[str, Any]]:
    """Samples of ``batches`` fresh pairs of sessions (a long session's context fills up)."""
    pooled: dict[str, dict[str, Any]] = {a: {"wall": [], "cli": [], "rss": [], "history": []}
                                         for a in ("on", "off")}
    for _ in range(batches):
        r = asyncio.run(_arms(b, size, turns))
        for arm in pooled:
            pooled[arm]["wall"] += r[arm]["wall"]
            pooled[arm]["cli"] += r[arm]["cli"]
            pooled[arm]["rss"].append(r[arm]["rss"] or 0)
            pooled[arm]["history"].append(r[arm]["history"])
    return pooled


def fig_checkpoint(b: Bench) -> list[Row]:
    turns, batches = (6, 1) if b.quick else (15, max(2, b.repeat - 2))
    rows = []
    for size in (4096, 32768):
        r = _pooled(b, size, batches, turns)
        on, off = r["on"]["wall"], r["off"]["wall"]
        paired = statistics.median(a - c for a, c in zip(on, off, strict=True))
        mon, moff = median(on), median(off)
        assert mon is not None and moff is not None
        n = len(on)
        rows.append(Row(
            "7", f"a turn writing {FILES} files of {size // 1024} KB, with file checkpointing "
            f"({n} turns each: {batches} pairs of sessions, turns interleaved)", "ms", mon, moff,
            "the same turn without checkpointing",
            "paired difference <= 5% of the turn without (else: off by default)",
            met=paired <= 0.05 * moff, samples=on, anchor_samples=off,
            note=(f"paired difference on − off: median {paired:+.0f} ms "
                  f"({paired / moff:+.0%}); CLI duration_ms {median(r['on']['cli']):.0f} / "
                  f"{median(r['off']['cli']):.0f} ms; CLI RSS at the end "
                  f"{median(r['on']['rss']) or 0:.0f} / {median(r['off']['rss']) or 0:.0f} MB; "
                  f"checkpoints on disk {median(r['on']['history']) or 0:.0f} B per session of "
                  f"{turns} turns ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")))
    return rows
