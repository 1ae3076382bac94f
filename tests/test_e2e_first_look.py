"""Issue 26 end to end: what a notebook saved after a turn shows, and what the control bar keeps.

A real kernel over the Jupyter protocol, the real CLI, the scripted model. The saved notebook
is rebuilt from iopub as JupyterLab builds it (tests/test_e2e_static.py: every
``update_display_data`` applied wherever its display id is), and read as a frontend without
widget state shows it: the Markdown and text fallbacks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kernel import Kernel
from test_e2e_static import Cell, frontend_outputs, run, settle, static_turn

pytestmark = pytest.mark.e2e

WAITING = "paused for your decision"


def _all_text(cell: Cell) -> str:
    """Everything the saved cell shows: its streams and each display's fallbacks."""
    return cell.text() + "\n".join(
        f"{o['data'].get('text/plain', '')}\n{o['data'].get('text/markdown', '')}"
        for o in cell.displays())


def _words(md: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", md).split())


def _bar_values(k: Kernel) -> list[tuple[float, str]]:
    """Every value the control bar's state badge had, in order (time, HTML)."""
    out = []
    with k._lock:
        ids = {cid for cid, s in k.widgets.items() if s.get("_model_name") == "HTMLModel"}
        for m in k.messages:
            c = m["content"]
            if m["header"]["msg_type"] not in ("comm_msg", "comm_open") or c.get(
                    "comm_id") not in ids:
                continue
            state = (c.get("data") or {}).get("state") or {}
            value = str(state.get("value", ""))
            if re.search(r"<b>(idle|working…|waiting for you|closed)</b>", value):
                out.append((m["_t"], value))
    return out


def test_a_plan_turn_saved_tells_the_truth_and_the_bar_keeps_only_what_holds(
        kernel: Kernel, workdir: Path) -> None:
    model = None
    cells: list[Cell] = []
    first = run(kernel, cells, "%%claude --scripted plan_approve.yaml --plan --mode acceptEdits"
                               "\nAdd a greeting script")
    # The cell returned with the plan waiting: a notebook saved now says so, under the card,
    # and its control line says only what stays true while the bar is live (never "mode ?
    # model ?"; the bar's display is not updated while its cell is the newest: issue 36).
    model = kernel.eval("plan_widgets.get().model").strip("'")
    bar = first.displays()[0]["data"]
    assert bar["text/plain"] == "session default", bar
    assert _words(bar["text/markdown"]) == "session default"
    turn = first.displays()[-1]["data"]
    assert f"{WAITING} (plan) on the card above" in turn["text/plain"]
    assert f"{WAITING} (plan) on the card above" in _words(turn["text/markdown"])
    assert "expires in" not in _all_text(first)

    kernel.click(kernel.wait_widget("ButtonModel", description="Approve"))
    assert settle(kernel, timeout=60) == "idle"
    frontend_outputs(kernel, cells)
    # The turn has ended: the line goes with the decision, the card says how it ended, and
    # the first cell's line says the mode the turn ended in (one cell saved: no second cell
    # ever updated it).
    saved = _all_text(first)
    assert WAITING not in saved and "mode ?" not in saved and "model ?" not in saved, saved
    assert "Approved" in static_turn(first) and "Done: `hello.py`" in _words(
        static_turn(first)) or "Done:" in static_turn(first)
    # the turn's record says the mode and model it ended under
    assert f"· mode Accept edits · model {model}" in _words(static_turn(first))

    # The turn changed a file: the bar offers Rewind files (turn 1), and the context meter.
    rewind = kernel.wait_widget("ButtonModel", description="Rewind files (turn 1)")
    kernel.wait_until(lambda: any("ctx" in v for _t, v in _bar_values(kernel)), 30,
                      "the context meter")
    # A turn that changed no files: no Rewind files for it, and the meter shows the last
    # value all along (it is measured again after the turn, in the background).
    second = run(kernel, cells, "%%claude\nhello")
    assert settle(kernel) == "idle"
    kernel.wait_until(lambda: kernel.eval(
        "plan_widgets.get().context.turn") == "2", 30, "the second measure")
    shown = [v for _t, v in _bar_values(kernel)]
    since = next(i for i, v in enumerate(shown) if "ctx" in v)
    assert all("ctx" in v for v in shown[since:]), shown[since:]
    children = json.loads(kernel.eval(
        "__import__('json').dumps([getattr(c, 'description', '') for c in "
        "__import__('plan_widgets.ipython.registry', fromlist=['x'])"
        ".control_bar(plan_widgets.get()).children])").strip("'"))
    assert not [c for c in children if c.startswith("Rewind files")], children
    assert "Hello! You said: hello" in static_turn(second)
    del rewind

    # Closed: the bar says so, and nothing on it can be clicked any more.
    kernel.execute("await plan_widgets.get().close()")
    toggle = kernel.find_widgets("ToggleButtonModel", description="Plan mode")[-1]
    kernel.wait_until(lambda: kernel.widgets[toggle].get("disabled") is True, 30,
                      "the Plan mode toggle disabled")
    assert "closed" in _bar_values(kernel)[-1][1]


def test_an_expired_card_leaves_no_waiting_line(kernel: Kernel, workdir: Path) -> None:
    cells: list[Cell] = []
    cell = run(kernel, cells, "%%claude --scripted dec_tool.yaml --approval-timeout 3\n"
                              "Please write two files")
    assert f"{WAITING} (tool)" in cell.displays()[-1]["data"]["text/plain"]
    # each of its two writes asks, and each card expires after 3 s
    out = kernel.execute(
        "import asyncio\n"
        "async def _idle():\n"
        "    while plan_widgets.get().status != 'idle':\n"
        "        await asyncio.sleep(0.1)\n"
        "await asyncio.wait_for(_idle(), 40)\n"
        "print(plan_widgets.get().status)", timeout=60)
    assert out["text"].strip() == "idle"
    frontend_outputs(kernel, cells)
    saved = _all_text(cell)
    assert WAITING not in saved and "expires in" not in saved, saved
    assert "Expired" in static_turn(cell) or "expired" in static_turn(cell)


def test_task_tools_are_the_checklist_in_the_saved_turn(kernel: Kernel, workdir: Path) -> None:
    cells: list[Cell] = []
    cell = run(kernel, cells, "%%claude --scripted life_tasks.yaml --mode acceptEdits\n"
                              "Write three files", timeout=180)
    assert settle(kernel, timeout=90) == "idle"
    frontend_outputs(kernel, cells)
    md = static_turn(cell)
    plain = cell.displays()[-1]["data"]["text/plain"]
    for out in (md, plain):
        assert "TaskCreate" not in out and "TaskUpdate" not in out and "taskId" not in out, out
        assert "Write c.txt" in out  # the checklist
    assert md.count("pw-tasks") == 1
    # the refused TodoWrite (this CLI offers the Task* tools) is the one quiet line left
    assert md.count("TodoWrite</code>") == 1
    assert len(re.findall(r'<details class="pw-tool"[ >]', md)) == 3  # TodoWrite, two Writes
