"""Unattended runs (issue 33, docs/unattended.md): real papermill and ``jupyter nbconvert
--execute`` on a notebook whose turn has a plan card, a question and a tool card. No rule: the
run fails naming the plan, and the saved notebook shows the plan above the error. Rules or a
Python decider: the run passes, the work is done, and the saved output names who decided."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import code_notebook

SCRIPT = Path(__file__).parent / "scripts" / "unattended.yaml"
BIN = Path(sys.executable).parent
RULES = "plans=approve:acceptEdits; questions=first; tools=allow:Bash(sh -c *)"
pytestmark = pytest.mark.e2e


def _notebook(tmp: Path, extra: list[str] = ()) -> Path:
    shutil.copy(SCRIPT, tmp / SCRIPT.name)
    (tmp / "work").mkdir()
    cells = [("code", "%load_ext plan_widgets\nimport plan_widgets")]
    cells += [("code", src) for src in extra]
    cells += [("code", f"%%claude --scripted {SCRIPT.name} --plan --mode acceptEdits --cwd work"
                       "\nWrite done.txt"),
              ("code", "print(open('work/done.txt').read())"),
              ("code", "await plan_widgets.get().close()")]
    nb = tmp / "run.ipynb"
    nb.write_text(json.dumps(code_notebook(cells)), encoding="utf-8")
    return nb


def _env(tmp: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PLAN_WIDGETS_")) and k != "CLAUDECODE"}
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), IPYTHONDIR=str(home / ".ipython"), **more)
    return env


def _papermill(tmp: Path, nb: Path, *args: str, **env: str) -> tuple[int, str, str]:
    out = tmp / "out.ipynb"
    p = subprocess.run([str(BIN / "papermill"), "-k", "python3", "--cwd", str(tmp), str(nb),
                        str(out), *args], env=_env(tmp, **env), capture_output=True, text=True,
                       timeout=240)
    return p.returncode, p.stderr, out.read_text(encoding="utf-8") if out.exists() else ""


def _cell(saved: str, start: str = "%%claude") -> dict[str, Any]:
    """The first cell of the saved notebook whose source starts with ``start``."""
    return next(c for c in json.loads(saved)["cells"] if "".join(c["source"]).startswith(start))


def _outputs(saved: str, start: str = "%%claude") -> str:
    """Every text of the cell's outputs (:func:`_cell`), in order; an error as its name and
    value (:func:`_traceback` for what the notebook shows of it)."""
    cell = _cell(saved, start)
    parts = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "error":
            parts.append("ERROR " + o["ename"] + ": " + o["evalue"])
        else:
            data = o.get("data", {})
            parts.append("".join(data.get("text/markdown", data.get("text/plain", o.get("text",
                                                                                  "")))))
    return "\n".join(parts)


def _traceback(cell: dict[str, Any]) -> str:
    """What the saved notebook shows of the cell's error (its ``traceback`` lines, colours
    taken out), or "" when it has none."""
    lines = [ln for o in cell.get("outputs", []) if o["output_type"] == "error"
             for ln in o["traceback"]]
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines))


def test_papermill_without_a_rule_fails_naming_the_plan(tmp_path: Path) -> None:
    nb = _notebook(tmp_path)
    rc, err, saved = _papermill(tmp_path, nb)
    assert rc != 0, err[-2000:]
    out = _outputs(saved)
    assert "UnattendedError" in out and 'approve the plan "Plan: write done.txt"' in out, out
    assert "PLAN_WIDGETS_RULES" in out, out
    assert out.index("Write it to `done.txt`") < out.index("ERROR"), out  # the plan, above
    assert not (tmp_path / "work" / "done.txt").exists()
    # the error shows as its one line, not a traceback
    shown = _traceback(_cell(saved))
    assert shown.startswith("UnattendedError: Unattended run: no one can approve"), shown
    assert "most recent call last" not in shown and 'File "' not in shown, shown


def test_papermill_with_rules_in_parameters(tmp_path: Path) -> None:
    nb = _notebook(tmp_path)
    rc, err, saved = _papermill(tmp_path, nb, "-p", "plan_widgets_rules", RULES)
    assert rc == 0, err[-3000:]
    assert (tmp_path / "work" / "done.txt").read_text() == "written\n"
    out = _outputs(saved)
    assert "by the unattended rule `plans=approve:acceptEdits`" in out, out
    assert "by the unattended rule `questions=first`" in out, out
    assert "by the unattended rule `tools=allow:Bash(sh -c *)`" in out, out
    assert "Done: done.txt written." in out, out


def test_nbconvert_with_a_python_decider(tmp_path: Path) -> None:
    decider = ("def mine(d):\n"
               "    if d.kind == 'plan': d.approve('acceptEdits')\n"
               "    elif d.kind == 'question': d.answer({'Word': 'fine'})\n"
               "    else: d.allow()\n"
               "plan_widgets.decide_with(mine)")
    nb = _notebook(tmp_path, [decider])
    p = subprocess.run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                        "--output", "out.ipynb", str(nb)], cwd=tmp_path, env=_env(tmp_path),
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr[-3000:]
    out = _outputs((tmp_path / "out.ipynb").read_text(encoding="utf-8"))
    assert out.count("by the Python decider `mine`") == 3, out
    assert "Word = fine" in out, out  # the answer, by its question's header


def test_nbconvert_malformed_rule_fails_at_load(tmp_path: Path) -> None:
    nb = _notebook(tmp_path)
    p = subprocess.run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                        "--output", "out.ipynb", str(nb)], cwd=tmp_path,
                       env=_env(tmp_path, PLAN_WIDGETS_RULES="plans=approve:yolo"),
                       capture_output=True, text=True, timeout=240)
    assert p.returncode != 0
    assert "PLAN_WIDGETS_RULES: `plans=approve:yolo`: unknown mode `yolo`" in p.stderr, \
        p.stderr[-2000:]


TERMINAL = """
ip = get_ipython()
ip.run_cell("%load_ext plan_widgets")
{config}
ip.run_cell("%%claude --scripted unattended.yaml --plan --mode acceptEdits\\nWrite done.txt")
ip.run_cell("import os; print('AFTER', os.path.exists('done.txt'))")
ip.run_cell("import plan_widgets; await plan_widgets.get().close()")
"""


def test_terminal_with_no_tty_is_unattended(workdir: Path) -> None:
    from test_e2e_terminal import run_ipython

    out = run_ipython(workdir, "a\n", TERMINAL.format(config=""), unattended="auto")
    assert 'UnattendedError: Unattended run: no one can approve the plan "Plan: write' in out, \
        out[-3000:]
    assert "AFTER False" in out and "Traceback" not in out
    ruled = TERMINAL.format(config=f"ip.run_cell({f'%config ClaudeMagics.rules = {RULES!r}'!r})")
    out = run_ipython(workdir, "", ruled, unattended="auto")
    assert "AFTER True" in out and "UnattendedError" not in out, out[-3000:]


def _ours(tmp: Path) -> list[str]:
    """Processes still running in ``tmp`` (by their folder or their command line)."""
    import psutil

    found = []
    for p in psutil.process_iter(["cmdline", "cwd"]):
        with contextlib.suppress(psutil.Error):
            line = " ".join(p.info["cmdline"] or [])
            if str(tmp) in line or str(tmp) in (p.info["cwd"] or ""):
                found.append(line[:200])
    return found


def test_papermill_execution_timeout_stops_the_turn_and_the_cli(tmp_path: Path) -> None:
    slow = tmp_path / "slow.yaml"
    slow.write_text('steps:\n  - when: {tool_result: "^$"}\n    delay: 120\n'
                    '    reply:\n      - text: "too late"\n')
    (tmp_path / "work").mkdir()
    cells = [("code", "%load_ext plan_widgets"),
             ("code", "%%claude --scripted slow.yaml --cwd work\nhello"),
             ("code", "print('after')")]
    nb = tmp_path / "run.ipynb"
    nb.write_text(json.dumps(code_notebook(cells)), encoding="utf-8")
    rc, err, saved = _papermill(tmp_path, nb, "--execution-timeout", "10")
    assert rc != 0 and "Timeout waiting for execute reply" in err, err[-2000:]
    assert "too late" not in saved and "after" not in _outputs(saved, "print('after')")
    deadline = time.monotonic() + 20
    while _ours(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _ours(tmp_path) == []


def test_a_background_agent_asking_unattended_fails_a_claude_cell_naming_it(
        tmp_path: Path) -> None:
    """docs/unattended.md: no rule, the agent's request is denied at once and a ``%%claude``
    cell raises it, naming it; the run stops there."""
    shutil.copy(SCRIPT.parent / "agents_background.yaml", tmp_path)
    (tmp_path / "work").mkdir()
    cells = [("code", "%load_ext plan_widgets\nimport plan_widgets, asyncio"),
             ("code", "%%claude --scripted agents_background.yaml --cwd work\n"
                      "start a background agent"),
             # the agent asks to write meanwhile (waited for, bounded: under load it asked
             # after 5 s in a CI run, and the next cell ran before it)
             ("code", "for _ in range(240):\n"
                      "    if plan_widgets.get().gate.host.referee.failures:\n"
                      "        break\n"
                      "    await asyncio.sleep(0.25)"),
             ("code", "%%claude\nwhat now"),
             ("code", "await plan_widgets.get().close()")]
    nb = tmp_path / "run.ipynb"
    nb.write_text(json.dumps(code_notebook(cells)), encoding="utf-8")
    rc, err, saved = _papermill(tmp_path, nb)
    assert rc != 0, err[-2000:]
    # the first %%claude cell to run after the agent asked fails naming it: the next one, or
    # (when the agent asks before its own turn ends, as on a busy machine) the agent's own cell,
    # which waits for the whole turn unattended; papermill then stops there
    failed = [c for c in json.loads(saved)["cells"] if _traceback(c)]
    assert len(failed) == 1 and "".join(failed[0]["source"]).startswith("%%claude"), failed
    shown = _traceback(failed[0])
    # (the agent's Write is the only thing that asks; its path may be cut with "…")
    assert shown.startswith("UnattendedError: Unattended run: no one can allow Write `"), shown
    assert not (tmp_path / "work" / "from_agent.txt").exists()
    assert _cell(saved, "await plan_widgets.get().close()").get("execution_count") is None
