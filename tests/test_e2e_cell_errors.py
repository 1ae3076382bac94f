"""A ``%%claude`` / ``%claude`` cell that did not do its work fails, in one line (issue 41.2).

IPython's own magics fail a cell on a mistake (``UsageError``: status ``error``, one line), so
Run All, papermill and nbconvert stop there. Here, over the Jupyter protocol with a real kernel
(and the real CLI where a session runs): each mistake, a session that cannot start, a turn
that ends in an error and the kernel's stop button end their cell with execute_reply status
``error`` and a single line, the turn's output stays, and the next cell works; papermill exits
non-zero at that cell.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import code_notebook
from kernel import Kernel, error_lines, requests_of

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent


def failed(out: dict[str, Any], ename: str) -> str:
    """The failed cell's only line (its error output), checked: status error, no traceback."""
    reply = out["reply"]
    assert reply["status"] == "error", reply
    assert reply["ename"] == ename, reply
    lines = str(out["text"]).strip().splitlines()
    assert len(lines) == 1, out["text"]
    assert lines[0].startswith(f"{ename}: "), lines
    assert "Traceback" not in out["text"] and "plan_widgets/" not in out["text"]
    return lines[0]


MISTAKES = [
    ("%%claude --mode bogus\nhello", "invalid choice: 'bogus'"),
    ("%%claude --cwd /nonexistent\nhello", "'/nonexistent' is not a directory"),
    ("%%claude --bogus-flag\nhello", "unrecognized arguments: --bogus-flag"),
    ("%%claude --scripted first_look.yaml\n", "the prompt is empty"),
    ("%claude nosuchcommand", "unknown command 'nosuchcommand'"),
    ("%claude stat", "did you mean 'status'?"),
    ("%claude log a b", "UsageError: usage: %claude log [ID] [--session NAME]"),
    ("%claude status", "no session 'default' yet"),
]


def test_each_mistake_fails_its_cell_in_one_line(kernel: Kernel) -> None:
    for code, says in MISTAKES:
        line = failed(kernel.execute(code, allow_error=True), "UsageError")
        assert says in line, (code, line)
        assert kernel.eval("1 + 1") == "2"  # the kernel stays usable
    # help is not a mistake: printed, and the cell is ok
    assert "usage: %claude COMMAND" in kernel.execute("%claude --help")["text"]
    assert "usage: %%claude" in kernel.execute("%%claude --help\nx")["text"]


def test_a_mistake_as_the_kernels_first_error_gets_its_reply(workdir: Path) -> None:
    """IPython's own UsageError, raised from an awaited cell before any plain cell ran, gets
    no execute_reply from ipykernel 7.4 (the page would wait forever): ours does."""
    k = Kernel(workdir)
    try:
        k.execute("import asyncio\nawait asyncio.sleep(0)\n"
                  "get_ipython().run_line_magic('load_ext', 'plan_widgets')")
        line = failed(k.execute("%%claude --mode bogus\nhello", timeout=30, allow_error=True),
                      "UsageError")
        assert "invalid choice: 'bogus'" in line
        assert k.eval("1 + 1") == "2"
    finally:
        k.shutdown()


def test_a_session_that_cannot_start_fails_its_cell(kernel: Kernel, workdir: Path) -> None:
    # no credentials (the kernel's environment has none, its HOME is a scratch folder)
    line = failed(kernel.execute("%%claude\nhello", allow_error=True), "UsageError")
    assert "No Claude credentials found" in line
    # the CLI cannot be run
    kernel.execute("%config ClaudeMagics.cli_path = '/nonexistent/claude'")
    line = failed(kernel.execute("%%claude --scripted first_look.yaml\nhello", allow_error=True),
                  "UsageError")
    assert "cli_path '/nonexistent/claude'" in line, line
    # a CLI that exits at once: the turn ends in an error, and the cell with it
    cli = workdir / "broken-claude"
    cli.write_text("#!/bin/sh\necho 'broken on purpose' >&2\nexit 3\n")
    cli.chmod(0o755)
    kernel.execute(f"%config ClaudeMagics.cli_path = {str(cli)!r}")
    out = kernel.execute("%%claude --scripted first_look.yaml\nhello", allow_error=True)
    assert out["reply"]["ename"] in ("SessionError", "TurnError"), out["reply"]
    failed(out, out["reply"]["ename"])
    kernel.execute("%config ClaudeMagics.cli_path = None")
    kernel.execute("%%claude --new --scripted first_look.yaml\nhello")  # the next cell works


def test_a_turn_that_ends_in_an_error_fails_its_cell(kernel: Kernel) -> None:
    out = kernel.execute("%%claude --scripted fault_500.yaml\nplease trigger it",
                         allow_error=True)
    line = failed(out, "TurnError")
    assert line.startswith("TurnError: the turn ended in an error: The model API failed: "
                           "HTTP 500"), line
    # the turn's output stays above the line: its own error line, and its static record
    assert any(e.startswith("The model API failed: HTTP 500") for e in error_lines(kernel))
    assert "HTTP 500" in "\n".join(str(d.get("text/plain", "")) for d in out["data"])
    kernel.execute("%%claude\nsecond prompt")  # the session goes on
    assert kernel.eval("plan_widgets.get().status") == "'idle'"


def test_the_stop_button_fails_the_waiting_cell_in_one_line(kernel: Kernel,
                                                             workdir: Path) -> None:
    cell = kernel.start("%%claude --scripted fault_slow.yaml\nbe slow")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the model request")
    kernel.interrupt()
    kernel.wait_until(lambda: any(
        m["parent_header"].get("msg_id") == cell and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle" for m in kernel.messages), 60, "idle")
    reply = kernel.kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != cell:
        reply = kernel.kc.get_shell_msg(timeout=30)
    out = {**kernel.outputs(cell), "reply": reply["content"]}
    assert failed(out, "Interrupted") == ("Interrupted: the turn was stopped and any pending "
                                          "decision cancelled")
    assert kernel.eval("1 + 1") == "2"


# -- papermill stops at the cell ---------------------------------------------------------------
def _papermill(tmp: Path, cells: list[str]) -> tuple[int, dict[str, Any]]:
    nb = tmp / "run.ipynb"
    nb.write_text(json.dumps(code_notebook([("code", c) for c in cells])), encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PLAN_WIDGETS_")) and k != "CLAUDECODE"}
    (tmp / "home").mkdir()
    env.update(HOME=str(tmp / "home"), IPYTHONDIR=str(tmp / "home" / ".ipython"))
    out = tmp / "out.ipynb"
    p = subprocess.run([str(BIN / "papermill"), "-k", "python3", "--cwd", str(tmp), str(nb),
                        str(out)], env=env, capture_output=True, text=True, timeout=240)
    return p.returncode, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("cell", "ename"), [
    ("%%claude --scripted first_look.yaml --mode bogus\nhello", "UsageError"),
    ("%claude nosuchcommand", "UsageError"),
    ("%%claude --scripted fault_500.yaml\nplease trigger it", "TurnError"),
])
def test_papermill_exits_nonzero_at_the_failed_cell(tmp_path: Path, workdir: Path, cell: str,
                                                     ename: str) -> None:
    for script in ("first_look.yaml", "fault_500.yaml"):
        shutil.copy(workdir / script, tmp_path / script)
    rc, saved = _papermill(tmp_path, ["%load_ext plan_widgets", cell, "print('after it')"])
    assert rc != 0
    errors = [(i, o) for i, c in enumerate(saved["cells"]) for o in c.get("outputs", [])
              if o["output_type"] == "error"]
    at = next(i for i, c in enumerate(saved["cells"]) if "".join(c["source"]) == cell)
    assert [(i, o["ename"]) for i, o in errors] == [(at, ename)], errors
    assert len(errors[0][1]["traceback"]) == 1, errors
    after = saved["cells"][at + 1]
    assert "".join(after["source"]) == "print('after it')" and not after.get("outputs"), after
