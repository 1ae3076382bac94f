"""Issue 41, point 5: the presence probe (``ipython/unattended.py``) leaves nothing in a page's
console. Every console message of a JupyterLab and a Notebook 7 page is collected from the
page's load through ``%load_ext``, a ``%%claude --plan`` turn whose plan is approved by mouse,
to the turn's static record; none may come from the probe (before: JupyterLab's kernel
connection logged ``Exception opening new comm`` and "Object 'plan_widgets.presence' not found
in registry" for the probe's comm, on every page). The detection stays on (no override), and
the page still counts as a person: the card waits for the click."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jupyter_ui import (
    CELL_TIMEOUT,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    browser,
    code_notebook,
    driver,
    jupyter_server,
    open_notebook,
    require_browser,
    run_cell,
)

SCRIPT = Path(__file__).parent / "scripts" / "plan_modes.yaml"
pytestmark = [pytest.mark.e2e, pytest.mark.browser]
PROBE_WORDS = re.compile(r"\bcomms?\b|plan_widgets|presence|registry", re.IGNORECASE)


@pytest.mark.parametrize("ui", UIS)
def test_the_probe_leaves_nothing_in_the_console(ui: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require_browser()
    import json
    import shutil

    from playwright.sync_api import expect

    monkeypatch.delenv("PLAN_WIDGETS_UNATTENDED", raising=False)  # detect, as users do
    monkeypatch.delenv("PLAN_WIDGETS_RULES", raising=False)
    root = tmp_path / "root"
    (root / "work").mkdir(parents=True)
    shutil.copy(SCRIPT, root / SCRIPT.name)
    cells = [("code", "%load_ext plan_widgets\nimport plan_widgets"),
             ("code", f"%%claude --scripted {SCRIPT.name} --plan --mode acceptEdits --cwd work\n"
                      "Plan a greeting"),
             ("code", "from plan_widgets.ipython import unattended as u\n"
                      "print(await plan_widgets.get().wait(60), u._presence.answered_by,\n"
                      "      u._presence.answered_after)\n"
                      "await plan_widgets.get().close()")]
    (root / "console.ipynb").write_text(json.dumps(code_notebook(cells)), encoding="utf-8")
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        try:
            page = context.new_page()
            said: list[str] = []
            page.on("console", lambda m: said.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: said.append(f"pageerror: {e}"))
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            nb = open_notebook(page, server, "console.ipynb", len(cells))
            run_cell(page, nb, 0)
            run_cell(page, nb, 1)  # returns while the plan card waits: a person is there
            approve = nb.nth(1).locator(
                ".pw-card-plan button.jupyter-button.widget-button:not([disabled])",
                has_text=re.compile(r"^\s*Approve\s*$"))
            expect(approve).to_have_count(1)
            approve.first.click()
            assert_written(root / "work" / "hello.py")
            run_cell(page, nb, 2)
            # the page was found by its widget manager (the quiet question), not the fallback
            expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text("idle widgets")
            print(ui, nb.nth(2).locator(".jp-OutputArea-output").inner_text())
            expect(nb.nth(1)).to_contain_text("Done:")
            assert_no_errors(page)
            page.wait_for_timeout(1000)  # anything the page logs as the turn's widgets close
            probe = [s for s in said if PROBE_WORDS.search(s)]
            assert probe == [], "\n".join(said)
        finally:
            context.close()


def assert_written(path: Path) -> None:
    import time

    deadline = time.monotonic() + CELL_TIMEOUT
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert path.exists(), path
