"""Tab in a ``%%claude`` cell lists completions and Enter takes one, by keyboard, in
JupyterLab 4 and Notebook 7 (issue 34).

The project's own command (``.claude/commands/greet.md``) completes after ``/`` before any
session runs (no CLI is started for it), and a path under the working folder after ``@``: the
kernel's completer answers the page's ``complete_request``, and the editor shows the text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_ui import (
    OPENING,
    UI_TIMEOUT,
    UIS,
    browser,
    driver,
    jupyter_server,
    notebook_with,
    open_notebook,
    require_browser,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
CELLS = [OPENING, ("code", "%%claude\nplease /gre"), ("code", "%%claude\nlook at @sales_2")]


@pytest.mark.parametrize("ui", UIS)
def test_tab_completes_a_command_and_a_path(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, _ = notebook_with(tmp_path, SCRIPTS / "notebook_tools.yaml", "tab.ipynb", CELLS)
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "greet.md").write_text("Say hello to $ARGUMENTS.\n")
    (root / "sales_2024.csv").write_text("a\n")
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            cells = open_notebook(page, server, "tab.ipynb", len(CELLS))
            run_cell(page, cells, 0)
            for i, done in ((1, "please /greet"), (2, "look at @sales_2024.csv")):
                editor = cells.nth(i).locator(".cm-content")
                editor.click()
                page.keyboard.press("Control+End")
                page.keyboard.press("Tab")  # the completer lists what the kernel answered
                item = page.locator(".jp-Completer-item:visible")
                expect(item).to_have_count(1)
                expect(item.first).to_contain_text(done.split()[-1])
                page.keyboard.press("Enter")  # taken
                expect(editor).to_have_text(re.compile(re.escape(done) + r"\s*$"))
        finally:
            context.close()
