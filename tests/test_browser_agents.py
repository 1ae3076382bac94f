"""A background agent in JupyterLab 4 and Notebook 7, as a user sees it: the cell returns, the
agent's card appears below it with no new cell and is allowed with the mouse, the agent's work
shows under its Agent line, the CLI's own turn shows below the cell, and the control bar lists
the agent. Screenshots: ``test-artifacts/screenshots/<ui>-<width>-agents-*.png``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    ARTIFACTS,
    CELL_TIMEOUT,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    assert_nothing_ran,
    browser,
    code_notebook,
    jupyter_server,
    open_notebook,
    record_dialogs,
    require_browser,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
SHOTS = ARTIFACTS / "screenshots"
WIDTHS = (800, 1400)
HEIGHT = 1400
CELLS = [
    ("code", "%load_ext plan_widgets\nimport plan_widgets\nfrom pathlib import Path\n"
             "work = Path('work').resolve()\nwork.mkdir(exist_ok=True)"),
    ("code", "%%claude --scripted agents_background.yaml --cwd $work\n"
             "start a background agent"),
    ("code", "await plan_widgets.get().close()\nprint('closed')"),
]


@pytest.mark.parametrize("ui", UIS)
def test_a_background_agent_in_a_real_browser(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect, sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(SCRIPTS / "agents_background.yaml", root / "agents_background.yaml")
    notebook = root / "agents.ipynb"
    notebook.write_text(json.dumps(code_notebook(CELLS), indent=1), encoding="utf-8")
    SHOTS.mkdir(parents=True, exist_ok=True)

    with jupyter_server(tmp_path, root, ui) as server, sync_playwright() as pw:
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
