"""A background agent in JupyterLab 4 and Notebook 7, as a user sees it: the cell returns, the
agent's card appears below it with no new cell and is allowed with the mouse, the agent's work
shows under its Agent line, the CLI's own turn shows below the cell, and the control bar lists
the agent. Screenshots: ``test-artifacts/screenshots/<ui>-<width>-agents-*.png``.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    CELL_TIMEOUT,
    CLOSING,
    OPENING,
    SHOTS,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    assert_nothing_ran,
    browser,
    driver,
    jupyter_server,
    notebook_with,
    open_notebook,
    record_dialogs,
    require_browser,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
WIDTHS = (800, 1400)
HEIGHT = 1400
CELLS = [
    OPENING,
    ("code", "%%claude --scripted agents_background.yaml --cwd $work\n"
             "start a background agent"),
    CLOSING,
]


@pytest.mark.parametrize("ui", UIS)
def test_a_background_agent_in_a_real_browser(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, notebook = notebook_with(tmp_path, SCRIPTS / "agents_background.yaml",
                                   "agents.ipynb", CELLS)

    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", WIDTHS[-1], HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            dialogs = record_dialogs(page)
            cells = open_notebook(page, server, notebook.name, len(CELLS))

            def shoot(where: Any, what: str) -> None:
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": HEIGHT})
                    where.scroll_into_view_if_needed()
                    where.screenshot(path=str(SHOTS / f"{ui}-{width}-agents-{what}.png"))
                page.set_viewport_size({"width": WIDTHS[-1], "height": HEIGHT})

            run_cell(page, cells, 0)
            run_cell(page, cells, 1)  # returns once the agent is launched
            cell = cells.nth(1)
            card = cell.locator(".pw-card-tool:not(.pw-static)", has_text="Write a file")
            expect(card).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            expect(card).to_contain_text('Agent "Write a file" asks')
            shoot(cell, "card-between-cells")
            card.locator("button.jupyter-button.widget-button:not([disabled])",
                         has_text=re.compile(r"^\s*Allow\s*$")).click()
            reply = cell.locator(".pw-static", has_text="NOTIFICATION REPLY")
            expect(reply.first).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            expect(cell.locator(".jupyter-widgets.pw-turn")).to_have_count(0)
            assert (root / "work" / "from_agent.txt").exists()
            agent_line = cell.locator("details", has_text="Write a file").first
            agent_line.locator("summary").first.click()
            expect(agent_line).to_contain_text("Subagent finished: wrote from_agent.txt.")
            shoot(cell, "finished")
            bar = cell.locator(".pw-control-bar").first
            agents = bar.locator("button", has_text=re.compile(r"agents"))
            expect(agents).to_be_visible()
            agents.click()
            expect(bar.locator("..")).to_contain_text("Subagent finished: wrote from_agent.txt.")
            expect(bar).to_contain_text("idle")
            shoot(cell.locator(".pw-control-bar").first.locator(".."), "bar-list")
            run_cell(page, cells, 2)
            expect(cells.nth(2).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / f"{ui}-agents-failure.png"), full_page=True)
            raise
        finally:
            context.close()
