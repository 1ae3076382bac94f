"""Issue 41 point 1 and issue 42 point 2 at the kernel: Run All waits for the agent's step; a
cell run by hand while a card waits runs at once; the kernel's stop button ends a card that
waits after its cell returned.

Run All is sent as the pages send it: every cell's ``execute_request`` back to back, before any
reply (measured on the page's websocket: within 1 ms). Clicks go over a kernel subshell, as
JupyterLab 4.6 and Notebook 7.6 send them by default. The real CLI, a real kernel, the
scripted model (tests/scripts/run_all.yaml: the approved plan writes hello.txt)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e

PLAN = "%%claude --scripted run_all.yaml --plan --mode acceptEdits\nWrite hello.txt"
READ = "print(open('hello.txt').read())"


def _idle(k: Kernel, msg_id: str) -> bool:
    return any(m["parent_header"].get("msg_id") == msg_id
               and m["header"]["msg_type"] == "status"
               and m["content"]["execution_state"] == "idle" for m in k.messages)


def _started(k: Kernel, msg_id: str) -> bool:
    return any(m["parent_header"].get("msg_id") == msg_id
               and m["header"]["msg_type"] == "execute_input" for m in k.messages)


def test_run_all_waits_for_the_approved_work(kernel: Kernel, workdir: Path) -> None:
    k = kernel
    k.comms_over_subshell()
    cells = [k.start(PLAN), k.start(READ), k.start("print('third')")]  # Run All
    approve = k.wait_widget("ButtonModel", description="Approve", timeout=60)
    time.sleep(1)  # a person reads the plan; the cells below must not have run meanwhile
    assert not _started(k, cells[1]), "the next cell ran while the plan card waited"
    k.click(approve)
    k.wait_until(lambda: _idle(k, cells[2]), 60, "the queued cells to run")
    assert "hello from the agent" in k.outputs(cells[1])["text"]
    assert "third" in k.outputs(cells[2])["text"]
    assert "run now" not in k.outputs(cells[0])["text"]  # no notice: the click could come


def test_a_cell_run_by_hand_while_the_card_waits_runs_at_once(kernel: Kernel,
                                                               workdir: Path) -> None:
    k = kernel
    k.comms_over_subshell()
    k.execute(PLAN)  # returns at the card: nothing was queued behind it
    approve = k.wait_widget("ButtonModel", description="Approve", timeout=60)
    out = k.execute("print('looked at the data')", timeout=30)
    assert "looked at the data" in out["text"]
    assert k.eval("plan_widgets.get().pending is not None") == "True"
    k.click(approve)
    assert k.wait_until(lambda: (workdir / "hello.txt").exists(), 60)


def test_the_stop_button_ends_a_card_that_waits_after_its_cell(kernel: Kernel,
                                                                workdir: Path) -> None:
    k = kernel
    k.comms_over_subshell()
    k.execute(PLAN)
    approve = k.wait_widget("ButtonModel", description="Approve", timeout=60)
    time.sleep(1)  # no cell runs: the kernel's loop is asleep
    k.interrupt()
    # no cell is run before the card ends: it ends by the interrupt alone
    assert k.wait_until(lambda: k.widgets[approve].get("disabled"), 30, "the card to end")
    assert k.eval("plan_widgets.get().pending") == "None"
    assert not (workdir / "hello.txt").exists()
    ended = k.eval("[(r.status, r.by) for r in plan_widgets.get().state.decisions.values()]")
    assert ended == "[('cancelled', 'interrupt')]", ended
    # the kernel's stop button still interrupts a running cell as before
    running = k.start("import time\ntime.sleep(30)")
    k.wait_until(lambda: _started(k, running), 30)
    time.sleep(0.5)
    k.interrupt()
    k.wait_until(lambda: _idle(k, running), 30, "the sleeping cell to stop")
    assert "KeyboardInterrupt" in k.outputs(running)["text"]


def test_the_stop_button_ends_the_wait_of_run_all(kernel: Kernel, workdir: Path) -> None:
    k = kernel
    k.comms_over_subshell()
    cells = [k.start(PLAN), k.start("print('second')")]
    k.wait_widget("ButtonModel", description="Approve", timeout=60)
    time.sleep(1)
    k.interrupt()
    k.wait_until(lambda: _idle(k, cells[1]), 30, "the wait to end")
    assert "Interrupted" in k.outputs(cells[0])["text"]
    assert k.eval("plan_widgets.get().pending") == "None"
    assert not (workdir / "hello.txt").exists()
