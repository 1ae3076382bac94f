"""Machine facts and the Markdown results table."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from ._figures import Row


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def _cli_version() -> str:
    try:
        import claude_agent_sdk

        cli = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
        r = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=30)
        return r.stdout.strip().split()[0] if r.stdout.strip() else "-"
    except Exception:
        return "-"


def machine() -> dict[str, Any]:
    import psutil

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory": f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "versions": ", ".join(f"{d} {_version(d)}" for d in (
            "claude-agent-sdk", "ipykernel", "ipywidgets", "jupyter_client", "pyzmq", "ipython",
        )) + f", Claude Code CLI {_cli_version()}",
    }


def _fmt(x: float | None, unit: str) -> str:
    if x is None:
        return "n/a"
    if unit in ("s",):
        return f"{x:.3f} s"
    if unit == "ms":
        return f"{x:.1f} ms"
    if unit == "us":
        return f"{x:.1f} µs"
    if unit == "MB":
        return f"{x:.1f} MB"
    if unit == "kB":
        return f"{x:.0f} kB"
    if unit == "n":
        return f"{x:g}"
    if unit == "/s":
        return f"{x:.1f}/s"
    return f"{x:.3g} {unit}"


def table(rows: list[Row]) -> str:
    out = ["| # | figure | measured (median) | anchor (median) | ratio | goal | met |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        anchor = f"{_fmt(r.anchor, r.unit)} ({r.anchor_name})" if r.anchor is not None else "-"
        ratio = f"{r.ratio:.2f}" if r.ratio is not None and r.anchor_name else "-"
        met = {True: "**met**", False: "**MISSED**", None: "-"}[r.met]
        metric = r.metric + (f" <br><sub>{r.note}</sub>" if r.note else "")
        out.append(f"| {r.figure} | {metric} | {_fmt(r.value, r.unit)} | {anchor} | {ratio} | "
                   f"{r.goal or '-'} | {met} |")
    return "\n".join(out)


def samples(rows: list[Row]) -> str:
    out = []
    for r in rows:
        if r.samples:
            s = ", ".join(f"{x:.3g}" for x in r.samples)
            a = ", ".join(f"{x:.3g}" for x in r.anchor_samples)
            out.append(f"- fig {r.figure}, {r.metric.split(' <br>')[0][:90]}: [{s}]"
                       + (f" vs anchor [{a}]" if a else "") + f" ({r.unit})")
    return "\n".join(out)


def results_markdown(rows: list[Row], info: dict[str, Any], command: str, repeat: int) -> str:
    return "\n".join([
        f"Run: {info['date']}, `{command}` ({repeat} repetitions, medians).",
        "",
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory']} memory, {info['os']}; "
        f"load average (1, 5, 15 min) at the start {info['load']}"
        + (f", at the end {info['load_end']}" if info.get("load_end") else "")
        + (f"; 1-minute load sampled every 10 s during the run: {info['load_during']}"
           if info.get("load_during") else "")
        + f"; Python {info['python']}; {info['versions']}.",
        "",
        table(rows),
        "",
        "<details><summary>Samples</summary>",
        "",
        samples(rows),
        "",
        "</details>",
    ])
