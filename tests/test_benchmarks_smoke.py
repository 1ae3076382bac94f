"""The benchmark harness runs: `python -m benchmarks --quick` on one cheap figure, and once
(one repetition, the smallest sizes) on the harnesses nothing else in the suite runs: many
sessions, the pre-start, the JupyterHub. No timing thresholds here: speed is judged in
docs/benchmarks.md, never in the test suite; a figure that cannot be measured fails the run
(exit 1), and one that misses its goal too (exit 3, accepted here only where a row says so)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
    # 3: measured, its goal missed on this busy machine (goals are judged in the recorded run,
    # docs/benchmarks.md, never here); 1 would be a figure that could not be measured
    assert r.returncode in (0, 3), r.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    # the block between the markers is replaced; the prose around it is kept
    assert "intro kept" in text and "explanations kept" in text and "\nold\n" not in text
    assert "| # | figure | measured (median) |" in text
    assert "2,000-turn event log" in text and "nproc" not in text  # a row, and the machine line
    assert "CPUs" in text and "claude-agent-sdk" in text and "python -m benchmarks" in text
    data = json.loads(raw.read_text(encoding="utf-8"))
    (row,) = data["rows"]
    assert row["value"] is not None and row["value"] > 0
    assert len(row["samples"]) >= 2 and isinstance(row["met"], bool)
    assert (r.returncode == 3) == (row["met"] is False), (r.returncode, row)  # exit says it
    assert data["machine"]["nproc"] >= 1


def test_unknown_figure_is_one_line_error() -> None:
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "nope"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "unknown figure(s) nope" in r.stderr and "Traceback" not in r.stderr


def test_a_figure_that_cannot_be_measured_fails_the_run(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path) -> None:
    import benchmarks.__main__ as bm
    from benchmarks._figures import Row

    def broken(_b: Any) -> list[Row]:
        raise RuntimeError("the harness broke")

    def fine(_b: Any) -> list[Row]:
        return [Row("x", "a figure that was measured", "ms", 1.0, goal="<= 2", met=True,
                    samples=[1.0])]

    monkeypatch.setattr(bm, "FIGURES", {"fine": fine, "broken": broken})
    out = tmp_path / "bench.md"
    assert bm.main(["--only", "fine,broken", "--repeat", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "FAILED: broken could not be measured" in err
    text = out.read_text(encoding="utf-8")  # the others are still reported
    assert "a figure that was measured" in text and "the harness broke" in text
    assert bm.main(["--only", "fine", "--repeat", "1"]) == 0


def test_a_missed_goal_fails_the_run(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import benchmarks.__main__ as bm
    from benchmarks._figures import Row

    def slow(_b: Any) -> list[Row]:
        return [Row("x", "a figure over its goal", "ms", 3.0, goal="<= 2", met=False,
                    samples=[3.0])]

    monkeypatch.setattr(bm, "FIGURES", {"slow": slow})
    assert bm.main(["--only", "slow", "--repeat", "1"]) == bm.MISSED == 3
    assert "FAILED: 1 goal(s) missed: x a figure over its goal" in capsys.readouterr().err


def test_figure_8_linear_check_can_fail() -> None:
    from benchmarks._many import linear

    assert linear(0.4, 0.5) and linear(0.33, 0.30) and linear(0.0, 0.05)
    assert not linear(0.4, 1.9)  # the old check (2 MB of slack) passed this
    assert not linear(0.4, 0.0) and not linear(2.0, 0.9)


def _smoke(only: str, tmp_path: Path) -> list[dict[str, Any]]:
    raw = tmp_path / "bench.json"
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--repeat", "1", "--only", only,
         "--json", str(raw)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    # 3: measured, a goal missed (this machine is shared and busy: the goals are judged in the
    # recorded run, docs/benchmarks.md); 1 would be a figure that could not be measured
    assert r.returncode in (0, 3), (r.stdout[-3000:], r.stderr[-2000:])
    rows: list[dict[str, Any]] = json.loads(raw.read_text(encoding="utf-8"))["rows"]
    assert rows and all(row["value"] is not None for row in rows), rows
    assert (r.returncode == 3) == any(row["met"] is False for row in rows), rows
    return rows


@pytest.mark.e2e
def test_many_sessions_and_prestart_harnesses_run(tmp_path: Path) -> None:
    rows = _smoke("many,prestart", tmp_path)
    figures = {row["figure"] for row in rows}
    assert figures == {"8", "9"}
    asleep = next(r for r in rows if "asleep" in r["metric"])
    assert "CLIs left: 0" in asleep["note"]


@pytest.mark.e2e
@pytest.mark.hub
def test_hub_harness_runs(tmp_path: Path) -> None:
    rows = _smoke("hub", tmp_path)
    assert [row["figure"] for row in rows] == ["10", "10"]
