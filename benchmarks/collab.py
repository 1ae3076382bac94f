"""Two people in one notebook with real-time collaboration (issue 36): a measurement, run by
hand (tests/test_browser_collab.py runs the paths a person takes, in CI). It needs
jupyter-collaboration, which must never go into the project's venv: scripts/test makes
``.venv-collab`` for it.

    PYTHONPATH=.:tests .venv-collab/bin/python benchmarks/collab.py lab after  # or: before,
                                                                 # none, signed

Person A and person B open the notebook in two browser contexts (real Chromium, one
JupyterLab server). A runs a ``%%claude --plan`` cell by keyboard and approves by mouse; B is
there from the start. ``after``: B runs "Trust Notebook" while the card waits; ``before``: B
runs it before A runs the cell; ``none``: never; ``signed``: never, but the notebook is
signed by this server (``jupyter trust``), as a notebook saved from Jupyter is. It prints,
for each page, whether the cell and its outputs are trusted (the page's own models, through
``window.jupyterapp``), each output's widget model id, and whether B has live buttons and
the control bar. Findings: docs/cli.md#collaboration.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_ui import OPENING, browser, code_notebook, jupyter_server, open_notebook, run_cell
from playwright.sync_api import expect, sync_playwright

PROBE = """(i) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const c = nb.model.cells.get(i);
  const outs = [];
  for (let k = 0; k < c.outputs.length; k++) {
    const o = c.outputs.get(k);
    const v = o.data['application/vnd.jupyter.widget-view+json'];
    outs.push({trusted: o.trusted, model_id: v ? v.model_id : null});
  }
  return {cell_trusted: c.trusted, outputs: outs};
}"""
SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "scripts" / "browser_approve.yaml"


def button(where: Any, label: str) -> Any:
    return where.locator("button.jupyter-button.widget-button:not([disabled])",
                         has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))


def trust(page: Any) -> None:
    """JupyterLab's "Trust Notebook" command, and its dialog accepted."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:trust'); }")
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_have_count(1)
    dialog.locator("button.jp-mod-accept, button.jp-mod-warn").first.click()
    expect(dialog).to_have_count(0)


def main(ui: str, when: str) -> None:
    tmp = Path(f"/tmp/pw-collab-{int(time.time())}")
    root = tmp / "root"
    root.mkdir(parents=True)
    (root / SCRIPT.name).write_text(SCRIPT.read_text())
    config = tmp / "jupyter_config_dir"  # (the folder jupyter_server uses)
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"LabApp": {"expose_app_in_browser": True}}))
    cells = [OPENING,
             ("code", f"%%claude --scripted {SCRIPT.name} --plan --cwd $work\nPlan a greeting"),
             ("code", "%%claude --plan\nPlan a second greeting")]
    (root / "m.ipynb").write_text(json.dumps(code_notebook(cells)))
    if when == "signed":  # the notebook trusted on this server (`jupyter trust`)
        import os
        import subprocess
        env = dict(os.environ)
        for k in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "HOME"):
            (tmp / k.lower()).mkdir(exist_ok=True)
            env[k] = str(tmp / k.lower())
        subprocess.run([str(Path(sys.executable).parent / "jupyter"), "trust",
                        str(root / "m.ipynb")], env=env, check=True)
    with jupyter_server(tmp, root, ui, shared=False) as server, sync_playwright() as pw:
        expect.set_options(timeout=60_000)
        pages = {}
        for who in "AB":
            page = browser(pw, tmp / f"profile-{who}").new_page()
            pages[who] = (page, open_notebook(page, server, "m.ipynb", len(cells)))
        (a, nba), (b, _) = pages["A"], pages["B"]

        def report(what: str, i: int) -> None:
            for who, (page, nb) in pages.items():
                print(f"{what} {who}: {page.evaluate(PROBE, i)} live Approve/Allow: "
                      f"{button(nb.nth(i), 'Approve').count() + button(nb.nth(i), 'Allow').count()}"
                      f", bar: {nb.nth(i).locator('.pw-control-bar').count()}")

        if when == "before":
            trust(b)
        run_cell(a, nba, 0)
        run_cell(a, nba, 1)
        expect(button(nba.nth(1).locator(".pw-card-plan"), "Approve").first).to_be_visible()
        b.wait_for_timeout(3000)
        report("card waits", 1)
        if when == "after":
            trust(b)
            b.wait_for_timeout(2000)
            report("B trusted", 1)
        button(nba.nth(1).locator(".pw-card-plan"), "Approve").first.click()
        card = nba.nth(1).locator(".pw-card-tool", has_text="Write")
        button(card, "Allow").first.click()
        expect(nba.nth(1).locator(".pw-turn.pw-static", has_text="Done")).to_be_visible()
        b.wait_for_timeout(3000)
        report("turn ended", 1)
        run_cell(a, nba, 2, wait=False)
        expect(button(nba.nth(2).locator(".pw-card-plan"), "Approve").first).to_be_visible()
        b.wait_for_timeout(3000)
        report("second cell's card waits", 2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "lab", sys.argv[2] if len(sys.argv) > 2 else "after")
