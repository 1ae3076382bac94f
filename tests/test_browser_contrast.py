"""Every text of every card, the bar and the turn is readable (WCAG AA) in JupyterLab's three
built-in themes, measured from the browser's computed colours (issue 41, point 3).

One JupyterLab page, one notebook, four sessions on the scripted model, left waiting at once:
a plan sent back with Keep planning and revised (the Changes view, "Sent back", the new card),
a tool permission (an Edit with its diff, after a Bash command allowed), a question card, and a
kernel-code card; each cell's control bar shows its markers and "waiting for you". The page is
measured in each theme, picked by mouse (Settings > Theme). Then every card is decided by mouse,
the turns turn static, the plan's Rewind files shows its confirmation card, and the page is
measured again in each theme. Last, the finished turns'
static HTML (what a saved notebook keeps) is measured on pages with none of JupyterLab's
variables: a white page, VS Code's dark default, and VS Code's dark page carrying ipywidgets'
light palette (tests/contrast.py says why). Screenshots of the plan, tool and question cards
and the bar in each theme: ``test-artifacts/screenshots/theme-<theme>-<what>.png``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from contrast import (
    LIGHT_VARIABLES,
    STATIC_BASES,
    THEMES,
    low_contrast,
    static_page,
    switch_theme,
)
from jupyter_ui import (
    CELL_TIMEOUT,
    SHOTS,
    UI_TIMEOUT,
    assert_no_errors,
    browser,
    code_notebook,
    driver,
    jupyter_server,
    open_notebook,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
USED = ("plan_feedback.yaml", "cards_tools.yaml", "cards_question.yaml", "kernel_tools.yaml")
CELLS = [
    ("code", "%load_ext plan_widgets\n"
             "import plan_widgets\n"
             "from pathlib import Path\n"
             "work = Path('work').resolve()\n"
             "work.mkdir(exist_ok=True)\n"
             "(work / 'greet.txt').write_text('hello world\\nsee you later\\n')\n"
             "counter = 1"),
    ("code", "%%claude --session plan --scripted plan_feedback.yaml --plan --mode acceptEdits "
             "--cwd $work\nAdd a greeting script"),
    ("code", "%%claude --session tools --scripted cards_tools.yaml --mode default --cwd $work\n"
             "Please tidy the greeting"),
    ("code", "%%claude --session ask --scripted cards_question.yaml --cwd $work\n"
             "Please ask me about the banner"),
    ("code", "%%claude --session code --scripted kernel_tools.yaml --mode default --cwd $work\n"
             "bump the counter"),
    ("code", "for name in ('plan', 'tools', 'ask', 'code'):\n"
             "    await plan_widgets.get(name).close()\n"
             "print('closed')"),
]
OUTPUTS = ".jp-Notebook .jp-OutputArea-output"


def _slug(theme: str) -> str:
    return theme.lower().replace("jupyterlab ", "").replace(" ", "-")


def _button(card: Any, label: str) -> Any:
    return card.locator("button.jupyter-button.widget-button:not([disabled])",
                        has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))


def _wait_static(cell: Any) -> None:
    """The cell's turn ended well (its saved record's footer says ✓); if not in time, the
    failure says what the cell shows, and a screenshot of it is kept (CI: once, cell 3's
    question turn, not over in 60 s at a slow moment, and nothing said what it showed)."""
    from playwright.sync_api import expect

    try:
        expect(cell.locator(".pw-turn.pw-static .pw-footer", has_text="✓")).to_have_count(
            1, timeout=CELL_TIMEOUT * 1000)
    except AssertionError as e:
        with contextlib.suppress(Exception):
            cell.screenshot(path=str(SHOTS / "contrast-cell-not-ended.png"), timeout=10_000)
        shown = ""
        with contextlib.suppress(Exception):
            shown = cell.inner_text(timeout=10_000)[-1500:]
        raise AssertionError(f"{e}\n-- the cell shows (its end):\n{shown}") from None


def _cards_waiting(page: Any, cells: Any) -> dict[str, Any]:
    """Runs the four sessions to their waiting cards; returns what to photograph."""
    from playwright.sync_api import expect

    for i in range(5):
        run_cell(page, cells, i)
    plan = cells.nth(1)
    box = plan.locator("textarea[placeholder^='What should change']").first
    box.click()
    box.press_sequentially("Please also add a test.")
    _button(plan.locator(".pw-card-plan").first, "Keep planning").click()
    revised = plan.locator(".pw-card-plan", has_text="Plan v2").last
    expect(_button(revised, "Approve")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
    expect(revised.locator(".pw-diff")).to_be_visible()
    expect(plan).to_contain_text("Sent back")
    tools = cells.nth(2)
    _button(tools.locator(".pw-card-tool", has_text="BASH-DONE").first, "Allow").click()
    edit = tools.locator(".pw-card-tool:not(.pw-static)", has_text="greet.txt").last
    expect(edit).to_contain_text("+ goodbye world", timeout=CELL_TIMEOUT * 1000)
    question = cells.nth(3).locator(".pw-card-question").first
    expect(_button(question, "Submit")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
    code = cells.nth(4).locator(".pw-card-tool", has_text="counter").first
    expect(_button(code, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
    expect(plan.locator(".pw-control-bar").first).to_contain_text("waiting for you")
    return {"plan": revised, "tool": edit, "question": question, "code": code,
            "bar": plan.locator(".pw-control-bar").first}


def _decide_all(cells: Any, live: dict[str, Any]) -> None:
    """Decides every card by mouse, waits for the turns to end, and opens the plan's bar's
    Rewind files (its confirmation is a card of its own)."""
    from playwright.sync_api import expect

    _button(live["plan"], "Approve").click()
    _button(live["tool"], "Allow").click()
    question = live["question"]
    question.locator(".widget-radio-box label", has_text="Blue —").locator("input").click()
    question.locator(".widget-checkbox", has_text="Small —").locator("input").click()
    _button(question, "Submit").click()
    _button(live["code"], "Allow").click()
    for i in (1, 2, 3, 4):
        _wait_static(cells.nth(i))
    bar = cells.nth(1).locator(".pw-control-bar").first
    bar.locator("button", has_text=re.compile(r"Rewind files \(turn \d+\)")).click()
    expect(_button(bar.locator(".pw-card-rewind"), "Rewind these files")).to_be_visible(
        timeout=CELL_TIMEOUT * 1000)


def _measure(page: Any, phase: str, theme: str, problems: list[str]) -> str:
    got = low_contrast(page, OUTPUTS)
    problems.extend(f"{theme}, {phase}: {x}" for x in got.low)
    return f"{got.texts} texts, lowest {got.lowest}"


def _measure_saved(context: Any, page: Any, problems: list[str]) -> str:
    """The finished turns' HTML on pages without JupyterLab's variables."""
    html = "".join(page.locator(".pw-turn.pw-static").evaluate_all(
        # what JupyterLab adds to a rendered heading (its ¶ link) is not in the saved output
        """els => els.map(e => { const copy = e.cloneNode(true);
                                  copy.querySelectorAll('.jp-InternalAnchorLink')
                                      .forEach(a => a.remove());
                                  return copy.outerHTML; })"""))
    assert "pw-card-plan" in html and "pw-diff" in html, "the saved record has no plan"
    plain = context.new_page()
    out = []
    try:
        for name, body in STATIC_BASES.items():
            for variables, how in (("", ""), (LIGHT_VARIABLES, " with ipywidgets' palette")):
                if not variables and name.startswith("white"):
                    continue
                plain.set_content(static_page(body, html, variables))
                got = low_contrast(plain, "#record")
                out.append(f"{name}{how}: {got.texts} texts, lowest {got.lowest}")
                problems.extend(f"saved record on a {name}{how}: {x}" for x in got.low)
    finally:
        plain.close()
    return "; ".join(out)


@pytest.mark.timeout(600)  # one page does three themes' work: 135 s here, 316 s at load 35
def test_every_text_is_readable_in_each_theme(tmp_path: Path) -> None:
    from jupyter_ui import require_browser

    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    for name in USED:
        shutil.copy(SCRIPTS / name, root / name)
    notebook = root / "themes.ipynb"
    notebook.write_text(json.dumps(code_notebook(CELLS), indent=1), encoding="utf-8")
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    measured: dict[str, str] = {}
    with jupyter_server(tmp_path, root, "lab") as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", 1000, 1400)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            cells = open_notebook(page, server, notebook.name, len(CELLS))
            live = _cards_waiting(page, cells)
            for theme in THEMES:  # Light first: the page opens in it
                if theme != THEMES[0]:
                    switch_theme(page, theme, UI_TIMEOUT * 1000)
                measured[f"live {theme}"] = _measure(page, "waiting cards", theme, problems)
                for what in ("plan", "tool", "question", "bar"):
                    live[what].scroll_into_view_if_needed()
                    live[what].screenshot(path=str(SHOTS / f"theme-{_slug(theme)}-{what}.png"))
            _decide_all(cells, live)
            for theme in reversed(THEMES):  # High Contrast first: the page wears it
                if theme != THEMES[-1]:
                    switch_theme(page, theme, UI_TIMEOUT * 1000)
                measured[f"static {theme}"] = _measure(page, "finished turns", theme, problems)
            measured["saved"] = _measure_saved(context, page, problems)
            # after JupyterLab's Settings menu the focus is on the page's body (measured), so a
            # person clicks into the notebook before Shift+Enter
            cells.nth(5).locator(".jp-InputPrompt").first.click()
            page.keyboard.press("Escape")
            run_cell(page, cells, 5)
            expect(cells.nth(5).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / "theme-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    print("\n" + "\n".join(f"{k}: {v}" for k, v in measured.items()))
    assert all(int(v.split()[0]) > 100 for k, v in measured.items() if k != "saved"), measured
    assert not problems, (f"{len(problems)} texts under WCAG AA:\n" + "\n".join(problems))

