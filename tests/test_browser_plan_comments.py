"""Comments on a plan's lines in JupyterLab 4 and Notebook 7 (issue 22, point 2; issue 31,
point 5), with the mouse and the keyboard: lines picked by clicking them in the plan (and by
Space), a comment added by keyboard, one removed, one edited, then the revised plan's Changes
view with each comment below its line. Screenshots at 800 and 1,400 px in
``test-artifacts/screenshots/`` (``<ui>-<width>-plan-lines.png``,
``<ui>-<width>-plan-comments.png``, ``<ui>-<width>-plan-changes-comments.png``); the same
layout checks as every card (test_browser_cards)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from jupyter_ui import (
    CELL_TIMEOUT,
    CLOSING,
    OPENING,
    UI_TIMEOUT,
    UIS,
    assert_no_errors,
    assert_no_math,
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
from test_browser_cards import _MEASURE, HEIGHT, SHOTS, WIDTHS, _check_card

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPTS = Path(__file__).parent / "scripts"
CELLS = [
    OPENING,
    ("code", "%%claude --scripted plan_comments.yaml --plan --mode acceptEdits --cwd $work\n"
             "Plan a greeting"),
    ("code", "import time\ntime.sleep(8)  # the kernel busy while the user types"),
    ("code", "print(plan_widgets.get().decisions[0].outcome.feedback)"),
    CLOSING,
]
FEEDBACK = "Keep it short, and name the user."


@pytest.mark.parametrize("ui", UIS)
def test_plan_comments_in_a_real_browser(tmp_path: Path, ui: str) -> None:
    require_browser()
    from playwright.sync_api import expect

    root, notebook = notebook_with(tmp_path, SCRIPTS / "plan_comments.yaml", "comments.ipynb",
                                   CELLS)
    problems: list[str] = []

    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile", WIDTHS[-1], HEIGHT)
        page = context.new_page()
        try:
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)
            dialogs = record_dialogs(page)
            cells = open_notebook(page, server, notebook.name, len(CELLS))

            def shoot(where: Any, what: str) -> None:
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": HEIGHT})
                    where.scroll_into_view_if_needed()
                    where.screenshot(path=str(SHOTS / f"{ui}-{width}-{what}.png"))
                    if width == WIDTHS[0]:
                        problems.extend(_check_card(where.evaluate(_MEASURE),
                                                    f"{ui} {width} px {what}"))
                page.set_viewport_size({"width": WIDTHS[-1], "height": HEIGHT})

            def button(card: Any, label: str) -> Any:
                return card.locator("button.jupyter-button.widget-button:not([disabled])",
                                    has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))

            run_cell(page, cells, 0)
            run_cell(page, cells, 1)
            cell = cells.nth(1)
            card = cell.locator(".pw-card-plan").first
            # the plan line by line, rendered: a click on a line opens a note below it
            button(card, "Comment on a line").click()
            lines = card.locator(".pw-plan-line")
            expect(lines.filter(has_text="Notes")).to_have_count(1)
            expect(card.locator(".pw-plan-line code", has_text="hello.py")).to_have_count(1)
            expect(lines.filter(has_text="##")).to_have_count(0)  # no Markdown marks
            # a heading keeps its size in comment mode, bigger than a plain line (issue 42,
            # point 9)
            size = "e => parseFloat(getComputedStyle(e.querySelector('b') || e).fontSize)"
            heading = lines.filter(has_text="Notes").locator("label span").first.evaluate(size)
            plain = lines.filter(has_text="that prints hello").locator(
                "label span").first.evaluate(size)
            assert heading > plain, (heading, plain)
            note = card.locator(".pw-comment-text textarea")
            lines.filter(has_text="that prints hello").click()
            note.click()
            note.press_sequentially("Print the world.")
            button(card, "Add comment").click()
            rows = card.locator(".pw-comment-row")
            expect(rows).to_have_count(1)
            # by keyboard: Space on the Notes heading's line, type, Tab to Add comment, Enter
            lines.filter(has_text="Notes").locator("input").focus()
            page.keyboard.press("Space")
            note.click()
            page.keyboard.type("Say which files stay untouched.")
            page.keyboard.press("Tab")
            page.keyboard.press("Enter")
            expect(rows).to_have_count(2)
            # a slip, removed; the first comment edited before sending
            lines.filter(has_text="Run it once").click()
            note.click()
            note.press_sequentially("A slip.")
            button(card, "Add comment").click()
            expect(rows).to_have_count(3)
            button(rows.filter(has_text="A slip."), "Remove comment").click()
            expect(rows).to_have_count(2)
            button(rows.filter(has_text="Print the world."), "Edit comment").click()
            expect(note).to_have_value("Print the world.")
            note.click()
            page.keyboard.press("ControlOrMeta+a")
            note.press_sequentially("Print the user's name, not the world.")
            shoot(card, "plan-lines")
            button(card, "Save comment").click()
            expect(rows.filter(has_text="Print the user's name")).to_have_count(1)
            expect(rows).to_have_count(2)
            button(card, "Done commenting").click()
            expect(card.locator(".pw-comment")).to_have_count(2)
            expect(card).to_contain_text("Section “Notes”")
            # a comment names its line as it reads, never by a number nobody saw (point 9)
            expect(card.locator(".pw-comments")).not_to_contain_text(re.compile(r"Line \d"))
            expect(card.locator(".pw-comments")).to_contain_text("On the line: 1. Create")
            expect(card).not_to_contain_text("A slip.")
            # The feedback is typed key by key while another cell keeps the kernel busy, and
            # Keep planning is clicked at once: the whole text must go with it (the page holds
            # a widget's later keystrokes until the kernel answers the first; the click must
            # not overtake them).
            run_cell(page, cells, 2, wait=False)
            expect(cells.nth(2).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\*\]"))
            box = card.locator("textarea[placeholder^='What should change']")
            box.click()
            box.press_sequentially(FEEDBACK)
            shoot(card, "plan-comments")
            button(card, "Keep planning").click()
            revised = cell.locator(".pw-card-plan", has_text="Revised plan").last
            expect(revised.locator(".pw-comment-note")).to_have_count(
                2, timeout=CELL_TIMEOUT * 1000)
            expect(revised.locator(".pw-comment-note").first).to_contain_text(
                "changed by this revision")
            expect(revised.locator(".pw-comment-note").last).to_contain_text(
                "not changed by this revision")
            shoot(revised, "plan-changes-comments")
            assert_no_math(cell)
            button(revised, "Approve").click()
            turn = cell.locator(".pw-turn.pw-static")
            expect(turn.locator(".pw-footer", has_text="✓")).to_have_count(
                1, timeout=CELL_TIMEOUT * 1000)
            expect(turn).to_contain_text("Your comments (sent with Keep planning)")
            run_cell(page, cells, 3)  # what Keep planning sent: the whole typed feedback
            sent = cells.nth(3).locator(".jp-OutputArea-output")
            expect(sent).to_contain_text(FEEDBACK)
            expect(sent).to_contain_text("Comment: Print the user's name, not the world.")
            expect(sent).not_to_contain_text("A slip.")
            run_cell(page, cells, 4)
            expect(cells.nth(4).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_nothing_ran(page, dialogs)
            assert_no_errors(page)
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(SHOTS / f"{ui}-comments-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    assert not problems, "\n".join(problems)
