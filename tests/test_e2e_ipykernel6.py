"""ipykernel 6.29 handles widget clicks only between cells (docs/cli.md#kernel): the %%claude
cell must return while a decision waits, so the click can arrive, and a later cell must never
wait for a decision that only a click can make."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel import Kernel

from plan_widgets.ipython.runall import NOTICE

pytestmark = pytest.mark.e2e

IPYKERNEL6 = "ipykernel==6.29.5"


@pytest.fixture(scope="module")
def ipykernel6(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ipykernel 6.29.5 in a folder that shadows the venv's ipykernel 7 (PYTHONPATH)."""
    target = tmp_path_factory.mktemp("ipykernel6")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         IPYKERNEL6, "nest_asyncio"],
        check=True, timeout=300,
    )
    return target


@pytest.fixture
def kernel6(workdir: Path, ipykernel6: Path) -> Iterator[Kernel]:
    k = Kernel(workdir, env={"PYTHONPATH": str(ipykernel6)})
    try:
        assert k.eval("__import__('ipykernel').__version__") == "'6.29.5'"
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        yield k
    finally:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  allow_error=True)
        k.shutdown()


def test_plan_card_click_works_on_ipykernel_6(kernel6: Kernel, workdir: Path) -> None:
    out = kernel6.execute("%%claude --scripted plan_approve.yaml --mode acceptEdits --plan\n"
                          "Add a greeting script", timeout=120)
    assert "paused for your decision (plan)" in out["shown"]
    kernel6.click(kernel6.wait_widget("ButtonModel", description="Approve"))
    out = kernel6.execute("s = plan_widgets.get()\nprint(await s.wait(timeout=60), s.mode)")
    assert out["text"].split() == ["idle", "acceptEdits"]
    assert (workdir / "hello.py").exists()


def test_a_later_cell_does_not_wait_for_a_pending_decision(
        kernel6: Kernel, workdir: Path) -> None:
    # Run All: the plan cell, then another %%claude cell, then plain code, all queued at once.
    first = kernel6.start("%%claude --scripted plan_approve.yaml --mode acceptEdits --plan\n"
                          "Add a greeting script")
    second = kernel6.start("%%claude\nhello after the plan")
    third = kernel6.start("print(1 + 1)")
    for msg_id in (first, second, third):
        kernel6.wait_until(lambda m=msg_id: any(
            x["parent_header"].get("msg_id") == m and x["header"]["msg_type"] == "status"
            and x["content"]["execution_state"] == "idle" for x in kernel6.messages), 120)
    # no click can reach a busy ipykernel 6: the cells run on, and the first one says so
    assert NOTICE in kernel6.outputs(first)["text"]
    assert "A decision is pending (plan)" in kernel6.outputs(second)["text"]
    assert kernel6.outputs(third)["text"].strip() == "2"
    # the click, once the cells are done, still decides; the queued prompt then runs
    kernel6.click(kernel6.wait_widget("ButtonModel", description="Approve"))
    out = kernel6.execute("s = plan_widgets.get()\nprint(await s.wait(timeout=60))\n"
                          "print(s.state.turns)")
    assert out["text"].split() == ["idle", "2"]
    assert (workdir / "hello.py").exists()
