"""The benchmark harness runs: `python -m benchmarks --quick` on one cheap figure (no timing
thresholds here; speed is judged in docs/benchmarks.md, never in the test suite)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_writes_a_table_and_raw_samples(tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    out.write_text("# Benchmarks\n\nintro kept\n\n<!-- results -->\nold\n<!-- /results -->\n"
                   "\nexplanations kept\n", encoding="utf-8")
    raw = tmp_path / "bench.json"
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "fold", "--out", str(out),
         "--json", str(raw)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    # the block between the markers is replaced; the prose around it is kept
    assert "intro kept" in text and "explanations kept" in text and "\nold\n" not in text
    assert "| # | figure | measured (median) |" in text
    assert "2,000-turn event log" in text and "nproc" not in text  # a row, and the machine line
    assert "CPUs" in text and "claude-agent-sdk" in text and "python -m benchmarks" in text
    data = json.loads(raw.read_text(encoding="utf-8"))
    (row,) = data["rows"]
    assert row["value"] is not None and row["value"] > 0
    assert len(row["samples"]) >= 2 and row["met"] in (True, False)
    assert data["machine"]["nproc"] >= 1


def test_unknown_figure_is_one_line_error() -> None:
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "nope"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "unknown figure(s) nope" in r.stderr and "Traceback" not in r.stderr
