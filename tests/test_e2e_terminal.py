"""Terminal IPython (no kernel, no widgets): text output, and the decision asked at the prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DRIVER = """
ip = get_ipython()
ip.run_cell("%load_ext plan_widgets")
ip.run_cell("%%claude --scripted plan_approve.yaml --plan --mode acceptEdits\\nAdd a greeting")
ip.run_cell("import os, plan_widgets; print('AFTER', os.path.exists('hello.py'), "
            "plan_widgets.get().mode)")
"""


def run_ipython(workdir: Path, answers: str) -> str:
    (workdir / "driver.py").write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(workdir / ".home"), IPYTHONDIR=str(workdir / ".home" / ".ipython"))
    ipython = [sys.executable, "-m", "IPython", "--colors=NoColor", "--no-banner"]
    proc = subprocess.run([*ipython, "driver.py"], input=answers, capture_output=True,
                          text=True, cwd=workdir, env=env, timeout=180)
    return proc.stdout + proc.stderr


def test_terminal_approve_at_the_prompt(workdir: Path) -> None:
    out = run_ipython(workdir, "a\n")
    assert "=== Plan proposed ===" in out and "# Plan: add a greeting" in out
    assert "[a]pprove" in out
    assert "AFTER True acceptEdits" in out, out[-3000:]
    assert "Traceback" not in out


def test_terminal_keep_planning_is_not_approval(workdir: Path) -> None:
    # "k" then feedback; the script has no revised plan, so the turn ends without the work
    out = run_ipython(workdir, "k\nnot like this\n")
    assert "AFTER False plan" in out, out[-3000:]
    assert "Traceback" not in out
