"""Every card kind, in JupyterLab 4 and Notebook 7, at 800 px and 1,400 px: screenshots, and
what a user relies on when reading and clicking them.

A notebook built here (three sessions on the project's scripted model: tests/scripts/
cards_plan.yaml, cards_question.yaml, cards_tools.yaml) shows a plan card (pending, then
approved with the mouse), a question card (a single-choice and a multi-select question with
descriptions, Other, Notes; then answered), tool cards (a Bash command, then an Edit with its
diff), the finished turns as static HTML, and the control bar. Each is saved at both widths as
``test-artifacts/screenshots/<ui>-<width>-<what>.png``.

Checked on each card at 800 px (not pixels): every button is visible and inside the card and
the viewport; nothing overflows the card sideways (a long code line scrolls inside its block);
the card's title is the largest text on it; each option's description shows once. In both
widths and UIs: no model text typeset as math, no script ran.
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
    SHOTS,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    assert_no_math,
    assert_nothing_ran,
    browser,
    code_notebook,
    driver,
    jupyter_server,
    open_notebook,
    record_dialogs,
    require_browser,
    run_cell,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
WIDTHS = (800, 1400)
HEIGHT = 1400
PLAN_TITLE = "Plan proposed"
QUESTION_DESCRIPTIONS = ("warm and loud", "calm and cool, the brand color", "fresh",
                         "whatever $HOME and $PATH say, and \\(x\\) stays text",
                         "320 px, phones", "768 px, tablets", "1440 px, desktops")
CELLS = [
    ("markdown", "# Cards\nEvery card kind, for screenshots."),
    ("code", "%load_ext plan_widgets\n"
             "import plan_widgets\n"
             "from pathlib import Path\n"
             "work = Path('work').resolve()\n"
             "work.mkdir(exist_ok=True)\n"
             "(work / 'greet.txt').write_text('hello world\\nsee you later\\n')"),
    ("code", "%%claude --session plan --scripted cards_plan.yaml --plan --mode default "
             "--cwd $work\nPlan a banner for the landing page"),
    ("code", "%%claude --session ask --scripted cards_question.yaml --cwd $work\n"
             "Please ask me about the banner"),
    ("code", "%%claude --session tools --scripted cards_tools.yaml --mode default --cwd $work\n"
             "Please tidy the greeting"),
    ("code", "for name in ('plan', 'ask', 'tools'):\n"
             "    await plan_widgets.get(name).close()\n"
             "print('closed')"),
]

# Measures one card (a DOM element) as the user sees it.
_MEASURE = r"""(card) => {
  const vw = document.documentElement.clientWidth;
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {left: r.left, right: r.right, width: r.width}; };
  const buttons = [...card.querySelectorAll('button')].map(b => ({
      text: b.innerText.trim(), ...box(b), visible: b.checkVisibility()}));
  const sizes = [];
  const walk = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const t = walk.currentNode, el = t.parentElement;
    if (!t.textContent.trim() || !el.checkVisibility()) continue;
    sizes.push({size: parseFloat(getComputedStyle(el).fontSize),
                text: t.textContent.trim().slice(0, 50),
                title: el.closest('.pw-card-title') !== null});
  }
  // what sticks out of the card's border, and what is cut off (hidden overflow) inside it
  const edge = card.getBoundingClientRect().right
               - parseFloat(getComputedStyle(card).borderRightWidth);
  const name = (e) => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined
      ? '.' + e.className.trim().split(/\s+/).join('.') : '');
  const wide = [], cut = [];
  for (const e of card.querySelectorAll('*')) {
    if (!e.checkVisibility()) continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 1)
      wide.push({el: name(e), right: r.right, edge, text: e.innerText.slice(0, 40)});
    const ox = getComputedStyle(e).overflowX;
    if (e.tagName === 'LABEL' && e.scrollHeight > e.clientHeight + 1)  // text over the next line
      cut.push({el: name(e), scrollHeight: e.scrollHeight, clientHeight: e.clientHeight,
                text: e.innerText.slice(0, 40)});
    if (ox !== 'visible' && e.scrollWidth > e.clientWidth + 1)
      cut.push({el: name(e), overflowX: ox, scrollWidth: e.scrollWidth,
                clientWidth: e.clientWidth, text: e.innerText.slice(0, 40)});
  }
  const out = card.closest('.jp-OutputArea-output');
  return {vw, card: box(card), scrollWidth: card.scrollWidth, clientWidth: card.clientWidth,
          out: out ? {scrollWidth: out.scrollWidth, clientWidth: out.clientWidth} : null,
          buttons, sizes, wide, cut, text: card.innerText};
}"""


# The options of one card as the user sees them: each text beside its own radio or checkbox, no
# option's text over the next one's; a radio level with its text's first line. Problems found.
_OPTIONS = r"""(card) => {
  const bad = [];
  const rows = [...card.querySelectorAll('.widget-radio-box label, .widget-checkbox')]
      .filter(e => e.checkVisibility());
  const text = (row) => {  // the rectangles of the row's text, line by line
    const range = document.createRange();
    range.selectNodeContents(row.matches('label')
        ? [...row.childNodes].find(n => n.nodeType === Node.TEXT_NODE)
        : row.querySelector('label span'));
    return [...range.getClientRects()].filter(r => r.width > 0);
  };
  let above = null;
  for (const row of rows) {
    const lines = text(row), name = row.innerText.slice(0, 30);
    const input = row.querySelector('input');
    const r = input.getBoundingClientRect();
    if (!input.checkVisibility() || r.width < 10 || r.height < 10)
      bad.push(`${name}: its ${input.type} is not visible (${r.width}x${r.height})`);
    if (!lines.length) { bad.push(`${name}: no text`); continue; }
    const top = Math.min(...lines.map(l => l.top)), bottom = Math.max(...lines.map(l => l.bottom));
    const left = Math.min(...lines.map(l => l.left));
    if (r.right > left + 1) bad.push(`${name}: the ${input.type} is not left of its text`);
    const mid = (r.top + r.bottom) / 2, first = lines[0];
    if (mid < first.top || mid > first.bottom)
      bad.push(`${name}: the ${input.type} (${r.top}-${r.bottom}) is not level with the first `
               + `line (${first.top}-${first.bottom})`);
    if (above !== null && top < above.bottom - 1)
      bad.push(`${name}: its text (from ${top}) runs into the option above (to ${above.bottom})`);
    above = {bottom: Math.max(bottom, r.bottom)};
    if (row.matches('label') && [...row.children].some(c => c.tagName !== 'INPUT'))
      bad.push(`${name}: a radio's label has elements in it: ${row.innerHTML.slice(0, 80)}`);
  }
  return {rows: rows.length, bad};
}"""


def _prepare(root: Path) -> Path:
    for name in ("cards_plan.yaml", "cards_question.yaml", "cards_tools.yaml"):
        shutil.copy(SCRIPTS / name, root / name)
    nb = root / "cards.ipynb"
    nb.write_text(json.dumps(code_notebook(CELLS), indent=1), encoding="utf-8")
    return nb


def _check_card(m: dict[str, Any], what: str) -> list[str]:
    """What a user relies on, on one card at a narrow width: the problems found."""
    bad = []
    vw, card = m["vw"], m["card"]
    if card["right"] > vw + 1:
        bad.append(f"{what}: the card ends at {card['right']} px, past the viewport ({vw})")
    if m["scrollWidth"] > m["clientWidth"] + 1:
        bad.append(f"{what}: the card's content is {m['scrollWidth']} px wide in "
                   f"{m['clientWidth']} px")
    if m["out"] is not None and m["out"]["scrollWidth"] > m["out"]["clientWidth"] + 1:
        bad.append(f"{what}: the card's output area scrolls sideways ({m['out']})")
    bad += [f"{what}: sticks out of the card: {x}" for x in m["wide"]]
    # a long code line may scroll inside its own block; nothing else scrolls or is cut off
    bad += [f"{what}: scrolls sideways or is cut off: {x}" for x in m["cut"]
            if not x["el"].startswith("pre")]
    for b in m["buttons"]:
        if not (b["visible"] and b["width"] > 0):
            bad.append(f"{what}: button {b['text']!r} is not visible")
        elif not (card["left"] - 1 <= b["left"] and b["right"] <= min(card["right"], vw) + 1):
            bad.append(f"{what}: button {b['text']!r} at {b['left']}-{b['right']} px is outside "
                       f"the card ({card['left']}-{card['right']}) or the viewport ({vw})")
    titles = [s["size"] for s in m["sizes"] if s["title"]]
    others = [s for s in m["sizes"] if not s["title"]]
    biggest = max(others, key=lambda s: s["size"], default=None)
    if not titles:
        bad.append(f"{what}: the card has no title")
    elif biggest is not None and min(titles) <= biggest["size"]:
        bad.append(f"{what}: the title ({min(titles)} px) is not the largest text: {biggest}")
    return bad


@pytest.mark.parametrize("ui", UIS)
def test_cards_in_a_real_browser(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    notebook = _prepare(root)
    SHOTS.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    problems: list[str] = []  # layout problems, all reported at the end

    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", WIDTHS[-1], HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            dialogs = record_dialogs(page)
            cells = open_notebook(page, server, notebook.name, len(CELLS))

            def shoot(where: Any, what: str, card: bool = True) -> None:
                """Screenshots at each width (checks at the narrowest); back to the widest."""
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": HEIGHT})
                    where.scroll_into_view_if_needed()
                    path = SHOTS / f"{ui}-{width}-{what}.png"
                    where.screenshot(path=str(path))
                    saved.append(path)
                    if card and width == WIDTHS[0]:
                        problems.extend(_check_card(where.evaluate(_MEASURE),
                                                    f"{ui} {width} px {what}"))
                    if card:
                        found = where.evaluate(_OPTIONS)
                        problems.extend(f"{ui} {width} px {what}: {x}" for x in found["bad"])
                page.set_viewport_size({"width": WIDTHS[-1], "height": HEIGHT})

            def button(card: Any, label: str) -> Any:
                return card.locator("button.jupyter-button.widget-button:not([disabled])",
                                    has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))

            run_cell(page, cells, 0)  # the Markdown cell
            run_cell(page, cells, 1)

            # -- the plan card: pending, then approved with the mouse ------------------------
            run_cell(page, cells, 2)
            plan_cell = cells.nth(2)
            card = plan_cell.locator(".pw-card-plan").first
            expect(button(card, "Approve")).to_be_visible()
            expect(button(card, "Approve, auto-accept edits")).to_be_visible()
            expect(button(card, "Keep planning")).to_be_visible()
            expect(card.locator("h1").first).to_contain_text("Plan: a banner")
            expect(card.locator("table")).to_have_count(1)
            shoot(card, "plan-pending")
            shoot(plan_cell.locator(".pw-control-bar").first, "control-bar", card=False)
            button(card, "Approve").click()
            turn = plan_cell.locator(".pw-turn.pw-static")
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            expect(turn.locator(".jupyter-widgets")).to_have_count(0)
            decided = turn.locator(".pw-card-plan")
            expect(decided.locator(".pw-card-status")).to_contain_text("Approved")
            shoot(decided, "plan-decided")
            shoot(turn, "turn-static", card=False)
            assert_no_math(plan_cell)

            # -- the question card: pending, then answered -----------------------------------
            run_cell(page, cells, 3)
            ask_cell = cells.nth(3)
            card = ask_cell.locator(".pw-card-question").first
            expect(button(card, "Submit")).to_be_visible()
            # radio buttons for the single choice, a checkbox per option for several
            expect(card.locator("input[type=radio]")).to_have_count(4)
            expect(card.locator("input[type=checkbox]")).to_have_count(3)
            expect(card.locator("input[placeholder^='Other']")).to_have_count(2)
            expect(card.locator("input[placeholder^='Notes']")).to_have_count(2)
            text = card.inner_text()
            for desc in QUESTION_DESCRIPTIONS:
                assert text.count(desc) == 1, f"{ui}: {desc!r} shows {text.count(desc)} times"
            assert_no_math(card)
            shoot(card, "question-pending")

            def radio(label: str) -> Any:
                return card.locator(".widget-radio-box label", has_text=f"{label} —")

            def box(label: str) -> Any:
                return card.locator(".widget-checkbox", has_text=f"{label} —").locator("input")

            for label in ("Red", "Blue", "Green", "Env"):
                expect(radio(label).locator("input")).to_be_visible()
                expect(radio(label).locator("input")).not_to_be_checked()  # none picked yet
            radio("Red").locator("input").click()  # a click on the radio
            expect(radio("Red").locator("input")).to_be_checked()
            radio("Blue").click(position={"x": 200, "y": 8})  # ... and one on the text
            expect(radio("Blue").locator("input")).to_be_checked()
            expect(radio("Red").locator("input")).not_to_be_checked()  # one choice
            box("Small").click()
            box("Large").click()
            expect(box("Small")).to_be_checked()
            expect(box("Large")).to_be_checked()
            card.locator("input[placeholder^='Notes']").first.fill("the darker blue, please")
            shoot(card, "question-filled")
            button(card, "Submit").click()
            turn = ask_cell.locator(".pw-turn.pw-static")
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            decided = turn.locator(".pw-card-question")
            expect(decided).to_contain_text("Blue")
            shoot(decided, "question-decided")

            # -- the tool cards: a Bash command, then an Edit with its diff ------------------
            run_cell(page, cells, 4)
            tools_cell = cells.nth(4)
            card = tools_cell.locator(".pw-card-tool:not(.pw-static)").first
            expect(card).to_contain_text("BASH-DONE")
            expect(button(card, "Allow")).to_be_visible()
            expect(button(card, "Deny")).to_be_visible()
            shoot(card, "tool-bash")
            button(card, "Allow").click()
            card = tools_cell.locator(".pw-card-tool:not(.pw-static)",
                                      has_text="greet.txt").last
            expect(card).to_contain_text("+ goodbye world", timeout=CELL_TIMEOUT * 1000)
            expect(card).to_contain_text("- hello world")
            expect(button(card, "Allow")).to_be_visible()
            shoot(card, "tool-edit")
            button(card, "Allow").click()
            turn = tools_cell.locator(".pw-turn.pw-static")
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            expect(turn).to_contain_text("has been updated")
            shoot(turn, "turn-tools-static", card=False)
            shoot(tools_cell.locator(".pw-control-bar").first, "control-bar-last", card=False)

            run_cell(page, cells, 5)
            expect(cells.nth(5).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_no_math(page)
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / f"{ui}-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    print(f"\n{len(saved)} screenshots in {SHOTS}")
    assert not problems, "\n".join(problems)

