"""A person in JupyterLab is not an executor (issue 33): the notebook that fails under
papermill with no rule (tests/test_unattended.py) shows its cards live in a real browser, with
the detection on (no override): the cell returns while the plan card waits, a click on Approve
goes on to the question card, also live, and no cell fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_ui import (
    UI_TIMEOUT,
    assert_no_errors,
    browser,
    driver,
    jupyter_server,
    open_notebook,
    require_browser,
    run_cell,
)
from test_unattended import _notebook

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


def test_a_person_in_jupyterlab_gets_live_cards(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require_browser()
    from playwright.sync_api import expect

    monkeypatch.delenv("PLAN_WIDGETS_UNATTENDED", raising=False)  # detect, as users do
    monkeypatch.delenv("PLAN_WIDGETS_RULES", raising=False)
    root = tmp_path / "root"
    root.mkdir()
    nb = _notebook(root)
    with jupyter_server(tmp_path, root, "lab") as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        try:
            page = context.new_page()
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            cells = open_notebook(page, server, nb.name, 4)
            run_cell(page, cells, 0)
            run_cell(page, cells, 1)  # returns while the plan card waits (a cell number)
            approve = cells.nth(1).locator(
                ".pw-card-plan button.jupyter-button.widget-button:not([disabled])",
                has_text=re.compile(r"^\s*Approve\s*$"))
            expect(approve).to_have_count(1)
            assert "UnattendedError" not in cells.nth(1).inner_text()
            approve.first.click()
            expect(cells.nth(1).locator(".pw-card-question:not(.pw-static) input")
                   .first).to_be_visible()
            assert_no_errors(page)
            run_cell(page, cells, 3)  # close: the question is cancelled, the CLI stops
        finally:
            context.close()
