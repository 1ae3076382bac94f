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


def run_ipython(workdir: Path, answers: str, driver: str = DRIVER,
                unattended: str = "no") -> str:
    """``unattended``: PLAN_WIDGETS_UNATTENDED; these tests type the answers through a pipe
    as a person would at a terminal, so by default someone is there (docs/unattended.md)."""
    (workdir / "driver.py").write_text(driver)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PLAN_WIDGETS_"))}
    env.update(HOME=str(workdir / ".home"), IPYTHONDIR=str(workdir / ".home" / ".ipython"),
               PLAN_WIDGETS_UNATTENDED=unattended)
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


def test_terminal_comments_typed_line_by_line(workdir: Path) -> None:
    """Issue 22: [c]omment asks for the line, then the comment; a refused one is one line;
    Keep planning sends them with their lines; the revision lists them, changed or not."""
    driver = DRIVER.replace("plan_approve.yaml", "plan_comments.yaml")
    answers = "c\n99\nx\nc\nprints hello\nprint the user name\nk\nshort\na\n"
    out = run_ipython(workdir, answers, driver)
    assert "[c]omment on a line" in out
    assert "The plan has no line 99 with text" in out
    assert "comment added on line 5: 1. Create `hello.py` that prints hello." in out
    assert ("your comment on line 5 (changed by this revision): print the user name"
            in out), out[-3000:]
    assert "AFTER True acceptEdits" in out, out[-3000:]
    assert "Traceback" not in out
