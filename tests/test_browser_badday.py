"""Issue 32 in a real JupyterLab: a retry's countdown while the API is overloaded, the quiet
line it leaves, and a compaction line, seen in the page by a user who runs the cells with the
keyboard. Screenshots: ``test-artifacts/screenshots/lab-retry-countdown.png`` and
``lab-compaction-line.png``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_ui import (
    CLOSING,
    OPENING,
    SHOTS,
    UI_TIMEOUT,
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

SCRIPTS = Path(__file__).parent / "scripts"
CELLS = [
    OPENING,
    ("code", "%%claude --scripted badday_retry.yaml --cwd $work\nAre you very busy today?"),
    ("code", "%%claude\n/compact keep the greeting"),
    CLOSING,
]


def test_retry_countdown_and_compaction_line_in_jupyterlab(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, _ = notebook_with(tmp_path, SCRIPTS / "badday_retry.yaml", "badday.ipynb", CELLS)
    with jupyter_server(tmp_path, root, "lab") as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", 1200, 900)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            cells = open_notebook(page, server, "badday.ipynb", len(CELLS))
            run_cell(page, cells, 0)
            run_cell(page, cells, 1, wait=False)
            turn = cells.nth(1)
            live = turn.locator(".pw-live")
            # the countdown, in place: reason, seconds to the next try, attempt of the maximum
            expect(live).to_have_text(re.compile(
                r"API overloaded · retrying in [2-9] s · attempt 1 of 4"))
            first = live.inner_text()
            expect(live).not_to_have_text(first)  # it counts down (or moves to attempt 2)
            turn.scroll_into_view_if_needed()
            turn.screenshot(path=str(SHOTS / "lab-retry-countdown.png"))
            # the stream resumed: the line is gone, one quiet line stays, the reply once
            expect(turn.locator(".jp-Cell-outputArea")).to_contain_text(
                re.compile(r"retried 2 times: API overloaded, \d+ s"), timeout=40_000)
            expect(live).to_have_count(0)
            expect(turn.locator(".jp-Cell-outputArea")).to_contain_text(
                "Recovered. You said: Are you very busy today?")
            shown = turn.locator(".jp-Cell-outputArea").inner_text()
            assert shown.count("Recovered. You said:") == 1, shown  # once, not once a try
            assert len(re.findall(r"retried 2 times", shown)) == 1, shown
            run_cell(page, cells, 2)
            compact = cells.nth(2)
            expect(compact.locator(".jp-Cell-outputArea")).to_contain_text(re.compile(
                r"conversation compacted: [\d,k]+ → [\d,k]+ tokens, manual"))
            shown = compact.locator(".jp-Cell-outputArea").inner_text()
            assert shown.count("conversation compacted") == 1, shown
            compact.scroll_into_view_if_needed()
            compact.screenshot(path=str(SHOTS / "lab-compaction-line.png"))
            run_cell(page, cells, 3)
            assert_no_errors(page)
        finally:
            context.close()
