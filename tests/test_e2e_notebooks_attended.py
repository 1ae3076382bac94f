"""The example notebooks as a person runs them (issue 42.3): cells one by one, the card
clicked, before the next cell runs or while it waits. Headless runs (nbval, papermill,
``./scripts/demo --execute``) are the decider's; here someone is there, so the decider each
notebook shows leaves the cards to the clicks, and every cell after a card still works.

A real kernel over the Jupyter protocol, clicks sent as widget messages (tests/kernel.py says
someone is there: ``PLAN_WIDGETS_UNATTENDED=no``, as a page's answer to the probe would)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _cells(name: str) -> list[str]:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("click_first", [True, False])
def test_plan_mode_notebook_with_the_card_clicked(tmp_path: Path, click_first: bool) -> None:
    """02: Approve clicked before the next cell runs, or while it waits: each cell passes."""
    shutil.copytree(NOTEBOOKS / "scripts", tmp_path / "scripts")
    k = Kernel(tmp_path)
    try:
        k.comms_over_subshell()  # as JupyterLab 4.6 sends clicks: they reach a busy cell
        cells = _cells("02_plan_mode.ipynb")
        at = next(i for i, c in enumerate(cells) if c.startswith("%%claude"))
        for code in cells[:at + 1]:
            k.execute(code)
        approve = k.wait_widget("ButtonModel", description="Approve", timeout=60)
        assert k.eval("plan_widgets.get().pending.kind") == "'plan'"  # the decider left it
        if click_first:
            k.click(approve)
            out = k.execute(cells[at + 1])
        else:
            running = k.start(cells[at + 1])  # waits, bounded, for the card
            k.click(approve)
            k.wait_until(lambda: "status: idle" in k.outputs(running)["text"], 60, "the cell")
            out = k.outputs(running)
        assert "mode: acceptEdits" in out["text"] and "hello from the approved plan" in out["text"]
        said = k.eval("[d.outcome.by for d in plan_widgets.get().decisions]")
        assert said == "['user']", said  # the click decided, not the decider
        for code in cells[at + 2:]:
            k.execute(code)
    finally:
        k.shutdown()
