"""Issue 43 in a real JupyterLab, by mouse: a Write card over an existing file, an Edit, a new
file and NotebookEdit's replace, insert and delete show their change (line numbers, the line
that goes and the one that comes, the cell and its position), in JupyterLab Light and then
Dark (switched from the Settings menu, as a person does, which sets
``@jupyterlab/apputils-extension:themes``), and Allow by mouse leaves the change in the
finished turn.

Screenshots: ``test-artifacts/screenshots/lab-change-<card>-<theme>.png``; with
``PLAN_WIDGETS_DOCS_IMG=1`` they are copied to ``docs/img/change-<card>-<theme>.png``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    CELL_TIMEOUT,
    OPENING,
    SHOTS,
    UI_TIMEOUT,
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

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).parent / "scripts" / "change_cards.yaml"
DOCS_IMG = REPO / "docs" / "img"
SETUP = (
    "import nbformat\n"
    "(work / 'notes.txt').write_text('alpha\\nbeta\\ngamma\\n')\n"
    "nbformat.write(nbformat.v4.new_notebook(cells=[\n"
    "    nbformat.v4.new_markdown_cell('# Analysis', id='t0'),\n"
    "    nbformat.v4.new_code_cell('x = 1', id='c1'),\n"
    "    nbformat.v4.new_code_cell('print(x)', id='c2')]), work / 'analysis.ipynb')")
OTHERS = [("e", "EDIT-NOTES"), ("new", "NEW-FILE"), ("ins", "NB-INSERT"), ("del", "NB-DELETE")]
"""The other kinds, each in a session of its own, shown and left waiting (the closing cell's
close ends them: nothing is allowed)."""
SEEN = {  # what each of those cards shows (as tests/test_e2e_change_cards.py checks it)
    "EDIT-NOTES": ("Edit: +1 −1 lines", "2 2   beta", "3   - gamma", "3 + gamma ray"),
    "NEW-FILE": ("New file: 3 lines", "1 + import math", "3 + print(math.pi)"),
    "NB-INSERT": ("Insert a new markdown cell after cell c1 (it becomes cell 3 of 4)",
                  "1 + ## Summary"),
    "NB-DELETE": ("Delete cell c2 (cell 3 of 3, code)", "1   - print(x)"),
}
CELLS = [
    (OPENING[0], OPENING[1] + "\n" + SETUP),
    ("code", "%%claude --session w --scripted change_cards.yaml --mode default --cwd $work\n"
             "REWRITE-NOTES please"),
    ("code", "%%claude --session nb --scripted change_cards.yaml --mode default --cwd $work\n"
             "NB-REPLACE please"),
    *[("code", f"%%claude --session {name} --scripted change_cards.yaml --mode default "
               f"--cwd $work\n{prompt} please") for name, prompt in OTHERS],
    ("code", "for name in ('w', 'nb', 'e', 'new', 'ins', 'del'):\n"
             "    await plan_widgets.get(name).close()\n"
             "print('closed')"),
]


def _dark(page: Any) -> None:
    """Settings > Theme > JupyterLab Dark, by mouse."""
    from playwright.sync_api import expect

    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel").get_by_text("JupyterLab Dark", exact=True).click()
    expect(page.locator("body[data-jp-theme-name='JupyterLab Dark']")).to_have_count(
        1, timeout=UI_TIMEOUT * 1000)
    page.wait_for_timeout(500)  # the theme's stylesheet applied (a screenshot, not an assert)


def test_change_cards_light_and_dark(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, notebook = notebook_with(tmp_path, SCRIPT, "changes.ipynb", CELLS)
    saved: list[Path] = []
    with jupyter_server(tmp_path, root, "lab") as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", 1100, 1300)
        page = context.new_page()
        dialogs = record_dialogs(page)
        try:
            def shoot(where: Any, name: str) -> None:
                where.scroll_into_view_if_needed()
                path = SHOTS / f"lab-change-{name}.png"
                where.screenshot(path=str(path))
                saved.append(path)

            cells = open_notebook(page, server, notebook.name, len(CELLS))
            run_cell(page, cells, 0)
            run_cell(page, cells, 1)
            write = cells.nth(1).locator(".pw-card-tool:not(.pw-static)").first
            expect(write).to_contain_text("BETA-ACC", timeout=CELL_TIMEOUT * 1000)
            for seen in ("Write over an existing file: +1 −1 lines", "1 1   alpha",
                         "2   - beta", "2 + BETA-ACC", "3 3   gamma"):
                expect(write).to_contain_text(seen)
            run_cell(page, cells, 2)
            cell = cells.nth(2).locator(".pw-card-tool:not(.pw-static)").first
            expect(cell).to_contain_text("Replace cell c1 (cell 2 of 3, code)",
                                         timeout=CELL_TIMEOUT * 1000)
            for seen in ("analysis.ipynb", "1   - x = 1", "1 + df.describe()"):
                expect(cell).to_contain_text(seen)
            others = []
            for i, (_name, prompt) in enumerate(OTHERS, start=3):
                run_cell(page, cells, i)
                card = cells.nth(i).locator(".pw-card-tool:not(.pw-static)").first
                for seen in SEEN[prompt]:
                    expect(card).to_contain_text(seen, timeout=CELL_TIMEOUT * 1000)
                others.append((prompt.lower(), card))
            shoot(write, "write-light")
            shoot(cell, "notebook-light")
            for name, card in others:
                shoot(card, f"{name}-light")
            _dark(page)
            shoot(write, "write-dark")
            shoot(cell, "notebook-dark")
            for name, card in others:
                shoot(card, f"{name}-dark")

            write.locator("button", has_text="Allow").first.click()
            done = cells.nth(1).locator(".pw-turn.pw-static .pw-card-tool")
            expect(done).to_contain_text("2 + BETA-ACC", timeout=CELL_TIMEOUT * 1000)
            expect(done).to_contain_text("Allowed")
            shoot(done, "write-decided-dark")
            cell.locator("button", has_text="Allow").first.click()
            done = cells.nth(2).locator(".pw-turn.pw-static .pw-card-tool")
            expect(done).to_contain_text("1 + df.describe()", timeout=CELL_TIMEOUT * 1000)
            last = len(CELLS) - 1
            run_cell(page, cells, last)
            expect(cells.nth(last).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / "lab-change-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    assert (root / "work" / "notes.txt").read_text() == "alpha\nBETA-ACC\ngamma\n"
    if os.environ.get("PLAN_WIDGETS_DOCS_IMG") == "1":
        for path in saved:
            shutil.copy(path, DOCS_IMG / path.name.removeprefix("lab-"))
