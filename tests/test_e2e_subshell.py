"""Issue 31, point 1, at the kernel: widget clicks sent over a kernel subshell, as JupyterLab 4.6
and Notebook 7.6 send them by default (``Kernel.comms_over_subshell``), and without one. Each
click's handler then runs on the subshell's thread (ipykernel 7.4); the package hands every
callback to the kernel's loop (``widgets.shared.handed``). Before that, approving a plan into a
mode that asks stalled here: no card for the approved Write until another cell ran.

No cell runs between the clicks and what they must bring: a cell would wake the kernel's loop
and hide the stall. The real CLI, a real kernel, the scripted model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kernel import Kernel
from test_e2e_plan_modes import _marker, _pick

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("subshell", [True, False], ids=["comms-over-a-subshell", "no-subshell"])
def test_approve_into_a_mode_that_asks_then_allow_then_the_toggle(
        kernel: Kernel, workdir: Path, subshell: bool) -> None:
    k = kernel
    if subshell:
        k.comms_over_subshell()
    k.execute("%%claude --scripted plan_modes.yaml --plan --mode acceptEdits\nPlan a greeting")
    _pick(k, "Yes, manually approve edits")  # a change (the picker's observer) on the subshell
    approve = k.wait_widget("ButtonModel", description="Approve")
    assert k.wait_until(lambda: "into Manual" in k.widgets[approve].get("tooltip", ""), 30)
    time.sleep(1)  # a person's pause: the kernel's loop is asleep when the click comes
    k.click(approve)
    # the approved Write asks: its card comes with no other cell run
    allow = k.wait_widget("ButtonModel", description="Allow", timeout=30)
    assert _marker(k)[0] == "mode Manual"
    k.click(allow)
    assert k.wait_until(lambda: (workdir / "hello.py").exists(), 30)
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    # the control bar's toggle (an observer, not a click) over the subshell too
    k.set_value(k.wait_widget("ToggleButtonModel", description="Plan mode"), True)
    assert k.wait_until(lambda: _marker(k)[0] == "mode Plan", 30)
    assert k.eval("plan_widgets.get().mode") == "'plan'"
