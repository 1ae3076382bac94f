"""How the suite is shared among parallel workers (conftest.py at the root): a notebook's
cells in one unit, a module with a shared fixture in one unit per UI, every other test alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
assert _spec is not None and _spec.loader is not None
root_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root_conftest)


def test_a_notebooks_cells_are_one_unit() -> None:
    units = {root_conftest.work_unit(f"notebooks/02_plan_mode.ipynb::Cell {i}")
             for i in range(12)}
    assert units == {"notebooks/02_plan_mode.ipynb"}


def test_a_module_with_a_shared_server_is_one_unit_per_ui() -> None:
    approve = "tests/test_browser_approve.py::test_{}[{}]"
    lab = {root_conftest.work_unit(approve.format(t, "lab")) for t in ("a", "b", "c")}
    notebook = {root_conftest.work_unit(approve.format(t, "notebook")) for t in ("a", "b")}
    assert lab == {"tests/test_browser_approve.py[lab]"}
    assert notebook == {"tests/test_browser_approve.py[notebook]"}
    assert {root_conftest.work_unit(f"tests/test_hub.py::test_{t}") for t in "ab"} == {
        "tests/test_hub.py"}


def test_every_other_test_goes_alone() -> None:
    for nodeid in ("tests/test_e2e_plan.py::test_approve_auto_accept_edits",
                   "tests/test_browser.py::test_plan_mode_notebook_in_a_real_browser[lab]"):
        assert root_conftest.work_unit(nodeid) == nodeid
