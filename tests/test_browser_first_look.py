"""Issue 26 in JupyterLab 4 and Notebook 7 at 900 px: a plan turn as a new user sees it, from
the card that waits to what the finished turn leaves behind, then Rewind files and a closed bar.

The notebook built here runs one session on the project's scripted model
(tests/scripts/first_look.yaml): a plan, approved with the mouse; the agent keeps a task list
(TaskCreate / TaskUpdate) while it writes a file with a long name and edits another. Checked:
the line under the waiting card goes once the plan is approved; the finished turn shows the
checklist and no task tool's JSON; the control bar's Rewind files opens a compact card (a title,
the files, the buttons inside it) whose paths break only after a "/"; Cancel leaves nothing in
the bar; once the session is closed, Plan mode and Rewind files are disabled. Screenshots:
``test-artifacts/screenshots/<ui>-900-first-look-<what>.png``.
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
    CELL_TIMEOUT,
    CLOSING,
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
from test_browser_cards import _MEASURE, _check_card

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPT = Path(__file__).parent / "scripts" / "first_look.yaml"
WIDTH, HEIGHT = 900, 1200
LONG = "a_rather_long_module_name_for_the_greeting.py"
CELLS = [
    ("code", "%load_ext plan_widgets\n"
             "import plan_widgets\n"
             "from pathlib import Path\n"
             "work = Path('work').resolve()\n"
             "(work / 'src' / 'greetings').mkdir(parents=True, exist_ok=True)\n"
             "(work / 'notes.txt').write_text('Notes:\\n')"),
    ("code", "%%claude --scripted first_look.yaml --plan --mode acceptEdits --cwd $work\n"
             "Add a greeting module"),
    CLOSING,
]

# Where the text of each <code> in ``card`` wraps: the character before each line break.
_BREAKS = r"""(card) => {
  const out = [];
  for (const code of card.querySelectorAll('code')) {
    const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    let top = null, prev = '';
    while (walk.nextNode()) {
      const node = walk.currentNode;
      for (let i = 0; i < node.length; i++) {
        const r = document.createRange();
        r.setStart(node, i); r.setEnd(node, i + 1);
        const rect = r.getClientRects()[0];
        if (!rect) continue;
        if (top !== null && rect.top > top + 2) out.push({text: code.innerText, before: prev});
        top = rect.top; prev = node.data[i];
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize("ui", UIS)
def test_a_plan_turn_a_new_user_sees(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, notebook = notebook_with(tmp_path, SCRIPT, "first_look.ipynb", CELLS)

    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        # opened wide (at 900 px JupyterLab's toolbar kept saying "No Kernel"), then narrowed
        context = browser(pw, tmp_path / "chromium-profile", 1400, HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            dialogs = record_dialogs(page)
            cells = open_notebook(page, server, notebook.name, len(CELLS))
            page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

            def shot(where: Any, what: str) -> None:
                where.scroll_into_view_if_needed()
                where.screenshot(path=str(SHOTS / f"{ui}-{WIDTH}-first-look-{what}.png"))

            run_cell(page, cells, 0)
            run_cell(page, cells, 1)
            cell = cells.nth(1)
            approve = cell.locator(".pw-card-plan button.widget-button:not([disabled])",
                                   has_text=re.compile(r"^\s*Approve\s*$"))
            expect(approve).to_be_visible()
            live = cell.locator(".pw-turn").first
            expect(live).to_contain_text("Waiting for your decision (plan) on the card above")
            shot(cell.locator(".jp-OutputArea, .jp-Cell-outputArea").first, "plan-waiting")
            approve.click()

            turn = cell.locator(".pw-turn.pw-static")
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            expect(turn).not_to_contain_text("Waiting for your decision")
            for raw in ("TaskCreate", "TaskUpdate", "taskId"):
                expect(turn).not_to_contain_text(raw)
            tasks = turn.locator(".pw-tasks")
            expect(tasks).to_have_count(1)
            expect(tasks).to_contain_text("Tasks 2/2")
            shot(turn, "turn-static")
            shot(tasks, "checklist")
            bar = cell.locator(".pw-control-bar").first
            expect(bar).to_contain_text("mode Accept edits")
            # still one bar, live; the turn's record says what it ran under
            expect(cell.locator(".pw-control-bar")).to_have_count(1)
            expect(cell.locator(".pw-control-line")).to_have_count(0)
            expect(turn.locator(".pw-footer")).to_contain_text("mode Accept edits")

            # Rewind files: a compact card in the bar; names whole, buttons inside it
            bar.locator("button", has_text=re.compile(r"Rewind files \(turn 1\)")).click()
            card = bar.locator(".pw-card-rewind")
            expect(card.locator(".pw-card-title")).to_contain_text("Rewind 3 files")
            expect(card).to_contain_text(LONG)
            expect(card).to_contain_text("(the plan file)")
            expect(card.locator("button", has_text="Rewind these files")).to_be_visible()
            shot(card, "rewind-card")
            problems = _check_card(card.evaluate(_MEASURE), f"{ui} {WIDTH} px rewind card")
            problems += [f"{ui}: a path broken after {b['before']!r}: {b['text']!r}"
                         for b in card.evaluate(_BREAKS) if b["before"] != "/"]
            # narrower (800 px, as the cards' screenshots): nothing sticks out (a name wider
            # than the card, and only such a name, breaks inside)
            page.set_viewport_size({"width": 800, "height": HEIGHT})
            shot(card, "rewind-card-800")
            problems += _check_card(card.evaluate(_MEASURE), f"{ui} 800 px rewind card")
            page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
            assert not problems, "\n".join(problems)
            card.locator("button", has_text=re.compile(r"^\s*Cancel\s*$")).click()
            expect(bar.locator(".pw-card-rewind")).to_have_count(0)
            expect(bar).not_to_contain_text("Not rewound")

            # Closed: nothing on the bar can be clicked
            run_cell(page, cells, 2)
            expect(bar).to_contain_text("closed")
            expect(bar.locator("button", has_text="Plan mode")).to_be_disabled()
            expect(bar.locator("button", has_text="Rewind files")).to_be_disabled()
            expect(bar.locator("button", has_text="Interrupt")).to_be_disabled()
            shot(bar, "bar-closed")
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / f"{ui}-first-look-failure.png"),
                                full_page=True)
            raise
        finally:
            context.close()


@pytest.mark.parametrize("ui", UIS)
def test_the_demo_notebook_as_saved(tmp_path: Path, ui: str) -> None:
    """The notebook the README's demo opens, before a cell runs: its saved outputs show how
    the plan was decided, with no widget to load."""
    require_browser()
    from playwright.sync_api import expect

    demo = Path(__file__).resolve().parents[1] / "notebooks" / "02_plan_mode.ipynb"
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(demo, root / demo.name)
    n = len(json.loads(demo.read_text(encoding="utf-8"))["cells"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", 1400, HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            open_notebook(page, server, demo.name, n)
            page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
            turn = page.locator(".pw-turn.pw-static").first
            expect(turn.locator(".pw-card-plan")).to_contain_text("Approved")
            expect(page.locator(".pw-control-line").first).to_have_text("session default")
            expect(turn.locator(".pw-footer").last).to_contain_text(
                re.compile(r"· mode Accept edits · model \S+"))
            text = page.locator(".jp-Notebook").inner_text()
            for stale in ("Waiting for you", "Error displaying widget", "model not found",
                          "mode ?", "/root/", "/tmp/"):
                assert stale not in text, stale
            shot_at = SHOTS / f"{ui}-{WIDTH}-first-look-demo-saved.png"
            page.locator(".jp-Cell").nth(3).scroll_into_view_if_needed()
            page.locator(".jp-Cell").nth(3).screenshot(path=str(shot_at))
        finally:
            context.close()
