"""Issue 42, point 4, in JupyterLab 4 and Notebook 7 by mouse and keyboard: after a click on a
card the keyboard goes on where the person was. A later cell selected, Allow clicked on the
agent's card: that later cell is still the selected one, and Shift+Enter runs it (before, the
click made the agent's cell the active one and the focus fell to the page's body: Shift+Enter
did nothing, and after one click back it re-ran the agent's cell).

Screenshots: ``test-artifacts/screenshots/<ui>-keep-place-*.png``.
"""

from __future__ import annotations

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
    browser,
    driver,
    jupyter_server,
    notebook_with,
    open_notebook,
    require_browser,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPT = Path(__file__).parent / "scripts" / "browser_keep_place.yaml"
WHERE = """() => {
  const panel = '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell';
  const cells = [...document.querySelectorAll(panel)];
  const a = document.activeElement;
  return {active: cells.findIndex(c => c.classList.contains('jp-mod-active')),
          body: a === document.body, in_cell: cells.findIndex(c => c.contains(a))};
}"""
"""Which cell is the active one, and where the keyboard's focus is."""


def where(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(WHERE))


WATCH_ARRIVALS = """() => {
  window.pwArrivals = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      if (!(n instanceof Element)) continue;
      for (const b of [n, ...n.querySelectorAll('button')]) {
        const card = b.matches('button') && b.closest('.pw-card');
        // after every observer's callback, before any input event (a task) can come
        if (card) queueMicrotask(() => window.pwArrivals.push(card.dataset.pwKeepPlace || ''));
      }
    }
  }).observe(document.body, {childList: true, subtree: true});
}"""
"""Records, for each button added to a card, whether its card was already kept (its listeners
on) at the first moment a click could reach the button (measured before the fix: never, the
card was kept only after its own keep-place view rendered, up to 50 ms later)."""


@pytest.mark.parametrize("ui", UIS)
def test_after_a_click_on_a_card_shift_enter_runs_the_selected_cell(
        ui: str, tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect

    cells = [OPENING,
             ("code", "%%claude --scripted browser_keep_place.yaml --mode default --cwd $work\n"
                      "Write the note"),
             ("code", "print('ran', 41 + 1)"),
             ("code", "print('third')"),
             CLOSING]
    root, _nb = notebook_with(tmp_path, SCRIPT, "keep.ipynb", cells)
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT * 1000)
        try:
            nb = open_notebook(page, server, "keep.ipynb", len(cells))
            run_cell(page, nb, 0)
            page.evaluate(WATCH_ARRIVALS)
            run_cell(page, nb, 1)
            agent = nb.nth(1)
            allow = agent.locator(".pw-card-tool button", has_text=re.compile(r"^\s*Allow\s*$"))
            expect(allow).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            ran = agent.locator(".jp-InputPrompt").inner_text()
            # a click as soon as a button shows is kept too: the card was kept before
            arrivals = page.evaluate("window.pwArrivals")
            assert arrivals and all(arrivals), (
                f"a card's button came on the page before its card was kept: {arrivals}")
            # the person selects a later cell (by mouse; command mode), then decides by mouse
            nb.nth(3).locator(".jp-InputPrompt").first.click()
            page.keyboard.press("Escape")
            nb.nth(2).locator(".jp-InputPrompt").first.click()
            page.keyboard.press("Escape")
            assert where(page)["active"] == 2
            page.wait_for_timeout(1000)  # a person reads the card
            allow.click()
            expect(agent.locator(".pw-turn.pw-static")).to_contain_text(
                "Done with the note.", timeout=CELL_TIMEOUT * 1000)
            page.wait_for_timeout(500)  # the card's static copy replaced its widgets
            now = where(page)
            agent.screenshot(path=str(SHOTS / f"{ui}-keep-place-after-allow.png"))
            assert now["active"] == 2 and not now["body"], (
                f"after the click the keyboard is not where the person was: {now}")
            page.keyboard.press("Shift+Enter")  # no click back into the notebook
            expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text(
                "ran 42", timeout=CELL_TIMEOUT * 1000)
            assert agent.locator(".jp-InputPrompt").inner_text() == ran, (
                "Shift+Enter re-ran the agent's cell")
            assert where(page)["active"] == 3  # and it went on to the next, as Shift+Enter does
            run_cell(page, nb, 4)
            expect(nb.nth(4).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_no_errors(page)
        except BaseException:
            page.screenshot(path=str(SHOTS / f"{ui}-keep-place-failure.png"), full_page=True)
            raise
        finally:
            context.close()
