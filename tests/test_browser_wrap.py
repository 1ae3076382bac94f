"""Long paths in a live turn's tool lines wrap inside the cell (issue 25): a path or command
with nowhere to break used to push the turn wider than the cell at a narrow width.

JupyterLab 4 and Notebook 7 at 800 px: a turn of the project's scripted model
(tests/scripts/long_paths.yaml) whose Read line carries a 190-character path stays live while a
Bash card waits; its tool line, opened, must end within the output area, and the output area
must not scroll sideways. Saved as ``test-artifacts/screenshots/<ui>-800-tool-long-path.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    OPENING,
    SHOTS,
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
WIDTH, HEIGHT = 800, 1000
CELLS = [
    OPENING,
    ("code", "%%claude --session deep --scripted long_paths.yaml --mode default --cwd $work\n"
             "Please read the deep file"),
    ("code", "await plan_widgets.get('deep').close()\nprint('closed')"),
]

# Everything in the turn that ends past the output area's right edge, and the area's overflow.
_MEASURE = r"""(turn) => {
  const area = turn.closest('.jp-OutputArea-output');
  const edge = area.getBoundingClientRect().right;
  const wide = [];
  for (const e of turn.querySelectorAll('*')) {
    if (!e.checkVisibility()) continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 1)
      wide.push({el: e.tagName.toLowerCase(), right: r.right, edge,
                 text: (e.innerText || '').slice(0, 40)});
  }
  const walk = document.createTreeWalker(turn, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {  // text that runs past the edge (a summary line does not clip)
    const t = walk.currentNode;
    if (!t.textContent.trim() || !t.parentElement.checkVisibility()) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    const right = Math.max(...[...range.getClientRects()].map(r => r.right));
    if (right > edge + 1) wide.push({text: t.textContent.slice(0, 40), right, edge});
  }
  return {edge, turn: turn.getBoundingClientRect().right, wide,
          area: {scrollWidth: area.scrollWidth, clientWidth: area.clientWidth}};
}"""


@pytest.mark.parametrize("ui", UIS)
def test_long_paths_in_live_tool_lines_wrap(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, _ = notebook_with(tmp_path, SCRIPTS / "long_paths.yaml", "deep.ipynb", CELLS)
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        # opened wide (at 800 px the toolbar folds away its kernel indicator), then narrowed
        context = browser(pw, tmp_path / "chromium-profile", 1400, HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            cells = open_notebook(page, server, "deep.ipynb", len(CELLS))
            page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
            run_cell(page, cells, 0)
            run_cell(page, cells, 1)
            cell = cells.nth(1)
            expect(cell.locator(".pw-card-tool").first).to_be_visible()  # the turn stays live
            turn = cell.locator(".pw-turn").first
            line = turn.locator("details.pw-tool", has_text="Read").first
            line.locator("summary").click()  # open: the path again, in the tool's input
            expect(line.locator("pre").first).to_be_visible()
            turn.scroll_into_view_if_needed()
            line.screenshot(path=str(SHOTS / f"{ui}-{WIDTH}-tool-long-path.png"))
            m: dict[str, Any] = line.evaluate(_MEASURE)
            run_cell(page, cells, 2)
        finally:
            context.close()
    assert m["wide"] == [], m["wide"]
    assert m["area"]["scrollWidth"] <= m["area"]["clientWidth"] + 1, m["area"]
