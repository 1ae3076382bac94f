"""``python -m benchmarks``: run the benchmarks of issues 7 and 15 and write the results table.

Exit codes: 0 all measured and met, 1 a figure could not be measured, 3 a goal missed.

Options: ``--repeat N`` (repetitions per figure, medians reported), ``--quick`` (2 repetitions,
the cheap figures first), ``--only flow,load,stream,memory,fold,tools,soak,checkpoint,hub,many,
prestart``,
``--out FILE``
(Markdown; the block between the ``<!-- results -->`` markers is replaced, or the file is written),
``--json FILE`` (raw samples), ``--setup-anchors`` (make benchmarks/.venv-anchors with the
anchor packages).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from ._checkpoint import fig_checkpoint
from ._figures import ANCHOR_VENV, Bench, Row
from ._figures import FIGURES as _ISSUE7
from ._hub import fig_hub
from ._many import fig_many, fig_prestart
from ._report import machine, results_markdown
from ._soak import fig_soak

BEGIN, END = "<!-- results -->", "<!-- /results -->"
# The exit code of a run whose figures were all measured but one missed its goal (1: a figure
# could not be measured; 2: bad arguments, argparse's).
MISSED = 3
FIGURES = {**_ISSUE7, "soak": fig_soak, "checkpoint": fig_checkpoint, "hub": fig_hub,
           "many": fig_many, "prestart": fig_prestart}
ANCHOR_PACKAGES = ["ipykernel", "ipywidgets", "jupyter-ai-magics",
                   "claude-code-jupyter-staging"]  # the PyPI name of cc_jupyter


def setup_anchors() -> None:
    """A separate venv for the anchors, so their dependencies never touch the project's."""
    if not (ANCHOR_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(ANCHOR_VENV)], check=True)
    py = str(ANCHOR_VENV / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", *ANCHOR_PACKAGES], check=True)
    subprocess.run([py, "-m", "ipykernel", "install", "--sys-prefix"], check=True)


def write_out(path: Path, block: str) -> None:
    """Replace the block between the marker lines (markers alone on their lines)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    begin, end = f"\n{BEGIN}\n", f"\n{END}"
    if begin in text and end in text.split(begin, 1)[1]:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = f"{head}{begin}{block}{end}{tail}"
    else:
        text = f"# Benchmarks\n\n{BEGIN}\n{block}\n{END}\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=5, help="repetitions per figure (default 5)")
    p.add_argument("--quick", action="store_true", help="2 repetitions: check the harness")
    p.add_argument("--only", default="", help="comma-separated: " + ",".join(FIGURES))
    p.add_argument("--out", default=None, help="Markdown file for the table (e.g. "
                   "docs/benchmarks.md); default: print only")
    p.add_argument("--json", default=None, help="write raw rows and samples here")
    p.add_argument("--setup-anchors", action="store_true",
                   help="create benchmarks/.venv-anchors (anchor packages from PyPI) and exit")
    a = p.parse_args(argv)
    if a.setup_anchors:
        setup_anchors()
        return 0
    repeat = 2 if a.quick and a.repeat == 5 else a.repeat
    names = [n for n in (a.only.split(",") if a.only else FIGURES) if n]
    bad = [n for n in names if n not in FIGURES]
    if bad:
        p.error(f"unknown figure(s) {', '.join(bad)}; choose from {', '.join(FIGURES)}")
    info = machine()
    loads: list[float] = []  # the 1-minute load average, every 10 s of the run
    done = threading.Event()

    def sample_load() -> None:
        while not done.wait(10):
            loads.append(os.getloadavg()[0])

    threading.Thread(target=sample_load, daemon=True).start()
    b = Bench(repeat, a.quick, lambda s: print(s, flush=True))
    print(f"benchmarks: {', '.join(names)}; {repeat} repetitions; scratch {b.work}", flush=True)
    rows: list[Row] = []
    failed: list[str] = []
    for name in names:
        t = time.monotonic()
        print(f"[{name}]", flush=True)
        try:
            rows.extend(FIGURES[name](b))
        except Exception as e:  # one broken figure must not hide the others (but fails the run)
            print(f"  {name} failed: {type(e).__name__}: {e}", flush=True)
            failed.append(name)
            rows.append(Row(name, f"{name}: the figure could not be measured", "", None,
                            note=f"{type(e).__name__}: {str(e)[:200]}"))
        print(f"  ({time.monotonic() - t:.0f} s)", flush=True)
    done.set()
    info["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if loads:
        info["load_during"] = (f"{min(loads):.1f}-{max(loads):.1f}, median "
                               f"{statistics.median(loads):.1f}")
    cmd = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    block = results_markdown(rows, info, cmd.strip(), repeat)
    print(block)
    if a.out:
        write_out(Path(a.out), block)
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": info, "rows": [
            {**asdict(r), "ratio": r.ratio} for r in rows]}, indent=1), encoding="utf-8")
    missed = [f"{r.figure} {r.metric[:60]}" for r in rows if r.met is False]
    if failed:
        print(f"benchmarks: FAILED: {', '.join(failed)} could not be measured (see above)",
              file=sys.stderr, flush=True)
        return 1
    if missed:  # a figure that does not hold fails the run too, with its own exit code
        print(f"benchmarks: FAILED: {len(missed)} goal(s) missed: " + "; ".join(missed),
              file=sys.stderr, flush=True)
        return MISSED
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
