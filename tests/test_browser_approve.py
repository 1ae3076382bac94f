"""Issue 31 in JupyterLab 4 and Notebook 7 with their default settings (so widget messages go
over a kernel subshell), by mouse, with no cell run between a click and what it must bring:

- a new user's default path: ``%%claude --plan`` in the default mode, Approve with the picker
  untouched, the approved Write's card, Allow, the file written;
- approving into a mode that asks (the picker changed from Accept edits to Manual, for this
  plan only: issue 43, point 5): the Write's card comes (it stalled until another cell ran:
  point 1), and once the plan's turn ends the session is back in Accept edits, the bar and
  the turn saying so;
- Approve, start fresh into Manual: the cell keeps showing the planning turn and the new
  conversation's card (the whole output hid: point 2); then the plan, kept (issue 43, point
  4), is listed by ``%claude plans`` and opened read-only by mouse.

One server per UI for the module (``served``); each test opens its own notebook. Screenshots:
``test-artifacts/screenshots/<ui>-approve-<what>.png``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
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
    Server,
    assert_no_errors,
    browser,
    code_notebook,
    driver,
    jupyter_server,
    open_notebook,
    require_browser,
    run_cell,
)
from test_notebooks_saved import untrue

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPT = Path(__file__).parent / "scripts" / "browser_approve.yaml"
WIDTH, HEIGHT = 1280, 1400
READING = 2000
"""A person's pause (ms) before a click: the kernel's loop falls asleep meanwhile, as it does
when a person reads a plan; a click right after the cell ran found it still awake, and a click
handled on the wrong thread went through (issue 31, point 1)."""


@dataclass
class Served:
    ui: str
    server: Server
    root: Path
    context: Any


@pytest.fixture(scope="module", params=UIS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One JupyterLab (or Notebook 7) and one Chromium for the module's tests."""
    require_browser()

    ui = str(request.param)
    tmp = tmp_path_factory.mktemp(f"approve-{ui}")
    root = tmp / "root"
    root.mkdir()
    shutil.copy(SCRIPT, root / SCRIPT.name)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with jupyter_server(tmp, root, ui) as server, driver() as pw:
        context = browser(pw, tmp / "chromium-profile", WIDTH, HEIGHT)
        try:
            yield Served(ui, server, root, context)
        finally:
            context.close()


@contextlib.contextmanager
def notebook(served: Served, name: str, cells: list[tuple[str, str]]) -> Iterator[Any]:
    """Open a new notebook ``name`` of ``cells`` (working folder ``name``'s own); yields
    ``(page, cells locator, the page's console errors)``; a failure leaves a full-page
    screenshot."""
    from playwright.sync_api import expect

    (served.root / f"{name}.ipynb").write_text(
        __import__("json").dumps(code_notebook(cells)), encoding="utf-8")
    page = served.context.new_page()
    errors = console_errors(page)
    try:
        page.set_default_timeout(UI_TIMEOUT * 1000)
        expect.set_options(timeout=UI_TIMEOUT * 1000)
        yield page, open_notebook(page, served.server, f"{name}.ipynb", len(cells)), errors
    except BaseException:
        with contextlib.suppress(Exception):
            page.screenshot(path=str(SHOTS / f"{served.ui}-approve-{name}-failure.png"),
                            full_page=True)
            (SHOTS / f"{served.ui}-approve-{name}-console.txt").write_text("\n".join(errors))
        raise
    finally:
        page.close()


def console_errors(page: Any) -> list[str]:
    """The console errors ``page`` logs from now on (a list that grows); checked to be heard
    (a positive control: an error the test logs itself reaches the list)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.evaluate("() => console.error('pw-test: the console is heard')")
    deadline = time.monotonic() + UI_TIMEOUT
    while "pw-test: the console is heard" not in errors:
        assert time.monotonic() < deadline, "the page's console is not heard"
        page.wait_for_timeout(100)
    errors.remove("pw-test: the console is heard")
    return errors


def button(where: Any, label: str) -> Any:
    return where.locator("button.jupyter-button.widget-button:not([disabled])",
                         has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))


def gone(errors: list[str]) -> list[str]:
    """The console errors of a widget view disposed after its output renderer had shown
    another widget (the renderer then hides the whole output: issue 31, point 2)."""
    return [e for e in errors if "removeChild" in e]


def written(path: Path) -> bool:
    """Whether ``path`` appears within a cell's time (polled, bounded; no cell runs)."""
    deadline = time.monotonic() + CELL_TIMEOUT
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return path.exists()


def shot(served: Served, where: Any, what: str) -> None:
    where.scroll_into_view_if_needed()
    where.screenshot(path=str(SHOTS / f"{served.ui}-approve-{what}.png"))


def work(name: str) -> tuple[str, str]:
    """The opening cell, with a working folder of the notebook's own."""
    return ("code", OPENING[1].replace("Path('work')", f"Path('{name}')"))


def test_approve_into_a_mode_that_asks_then_the_default_path(served: Served) -> None:
    from playwright.sync_api import expect

    cells = [work("manual"),
             ("code", "%%claude --session asks --scripted browser_approve.yaml --plan "
                      "--mode acceptEdits --cwd $work\nPlan a greeting"),
             ("code", "%%claude --scripted browser_approve.yaml --plan --cwd $work/newcomer\n"
                      "Plan a greeting"),
             ("code", "for name in ('asks', 'default'):\n"
                      "    await plan_widgets.get(name).close()\n"
                      "print('closed')")]
    folder = served.root / "manual"
    (folder / "newcomer").mkdir(parents=True)
    with notebook(served, "manual", cells) as (page, nb, errors):
        run_cell(page, nb, 0)
        # approve into a mode that asks: a session resting in Accept edits, the picker on
        # Manual; the first turn of its session, as the issue found it
        run_cell(page, nb, 1)
        cell = nb.nth(1)
        plan = cell.locator(".pw-card-plan").first
        # for this plan only (issue 43, point 5): back to Accept edits once its work ends
        plan.locator("select").select_option(
            label="Yes, manually approve edits, for this plan only (then Accept edits)")
        expect(button(plan, "Approve")).to_have_attribute("title", re.compile(
            r"into Manual \(default\), for this plan only \(then Accept edits\)$"))
        page.wait_for_timeout(READING)
        button(plan, "Approve").click()
        card = cell.locator(".pw-card-tool", has_text="Write")
        expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        bar = cell.locator(".pw-control-bar")
        expect(bar).to_contain_text("mode Manual · this plan only")
        expect(bar).to_contain_text("waiting for you")
        shot(served, cell, "manual-write-card")
        button(card, "Allow").click()
        assert written(folder / "hello.py"), "the Write approved into Manual did not run"
        expect(cell.locator(".pw-turn.pw-static")).to_contain_text(
            "Done: the file is written.", timeout=CELL_TIMEOUT * 1000)
        expect(bar).to_contain_text("idle")
        expect(cell.locator(".pw-turn.pw-static")).to_contain_text(
            "The plan's work is done: back to Accept edits (approved for this plan only)")
        expect(bar).to_contain_text("mode Accept edits", timeout=CELL_TIMEOUT * 1000)
        expect(bar).not_to_contain_text("this plan only")
        shot(served, cell, "this-plan-only-back")

        # a new user's default path: the default mode (Manual), Approve with the picker as
        # it came, the Write's card, Allow
        run_cell(page, nb, 2)
        cell = nb.nth(2)
        plan = cell.locator(".pw-card-plan").first
        expect(plan.locator("select option:checked")).to_have_text("Yes, manually approve edits")
        page.wait_for_timeout(READING)
        button(plan, "Approve").click()
        card = cell.locator(".pw-card-tool", has_text="Write")
        expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        shot(served, cell, "default-write-card")
        button(card, "Allow").click()
        assert written(folder / "newcomer" / "hello.py"), "the approved Write did not run"
        turn = cell.locator(".pw-turn.pw-static")
        expect(turn).to_contain_text("Done: the file is written.", timeout=CELL_TIMEOUT * 1000)
        expect(cell.locator(".pw-control-bar")).to_contain_text("idle")
        shot(served, cell, "default-done")
        run_cell(page, nb, 3)
        expect(nb.nth(3).locator(".jp-OutputArea-output")).to_contain_text("closed")
        assert_no_errors(page)
        assert not gone(errors)


def test_approve_start_fresh_into_manual_keeps_the_cell_shown(served: Served) -> None:
    from playwright.sync_api import expect

    cells = [work("fresh"),
             ("code", "%%claude --scripted browser_approve.yaml --plan --cwd $work\n"
                      "Plan a greeting"),
             ("code", "%claude plans"),
             CLOSING]
    folder = served.root / "fresh"
    with notebook(served, "fresh", cells) as (page, nb, errors):
        run_cell(page, nb, 0)
        run_cell(page, nb, 1)
        cell = nb.nth(1)
        plan = cell.locator(".pw-card-plan").first
        page.wait_for_timeout(READING)
        button(plan, "Approve, start fresh").click()
        # the new conversation's Write asks, in this cell, with the planning turn above it
        card = cell.locator(".pw-card-tool", has_text="Write")
        expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        expect(cell.locator(".pw-turn", has_text="Plan a greeting").first).to_be_visible()
        expect(cell).to_contain_text("Start fresh: the approved plan")
        shot(served, cell, "fresh-write-card")
        button(card, "Allow").click()
        assert written(folder / "fresh.py"), "the fresh conversation's Write did not run"
        expect(cell.locator(".pw-turn.pw-static", has_text="Done: the file is written.")
               ).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        expect(cell.locator(".pw-turn.pw-static", has_text="Plan a greeting").first
               ).to_be_visible()
        shot(served, cell, "fresh-done")
        # the plan is kept: listed, and opened read-only by mouse (issue 43, point 4)
        run_cell(page, nb, 2)
        listing = nb.nth(2).locator(".pw-plan-list")
        expect(listing).to_contain_text("1 kept plan(s)")
        expect(listing).to_contain_text("handed over")
        button(listing, "Open").click()
        card = nb.nth(2).locator(".pw-kept-plan")
        expect(card).to_contain_text(re.compile(r"Kept plan [0-9a-f]{12}: handed over"))
        expect(card).to_contain_text("%%claude --from-plan")
        expect(card.locator("select")).to_be_visible()
        assert button(card, "Approve").count() == 0  # read-only
        shot(served, nb.nth(2), "kept-plan")
        run_cell(page, nb, 3)
        expect(nb.nth(3).locator(".jp-OutputArea-output")).to_contain_text("closed")
        assert_no_errors(page)
        assert not gone(errors)


def save(page: Any, notebook_file: Path) -> None:
    """Save the notebook with Ctrl+S and wait (bounded) until the file has changed."""
    before = notebook_file.stat().st_mtime_ns
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + UI_TIMEOUT
    while notebook_file.stat().st_mtime_ns == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert notebook_file.stat().st_mtime_ns != before, "Ctrl+S did not save the notebook"


def saved_json(notebook_file: Path, timeout: float = 30) -> dict[str, Any]:
    """The saved notebook, once the server's write of it is whole (bounded): read right after
    the Save, a busy machine's file was still empty (JSONDecodeError at char 0)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return dict(json.loads(notebook_file.read_text(encoding="utf-8")))
        except json.JSONDecodeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def saved_turn(notebook_file: Path, i: int) -> dict[str, Any]:
    """The saved bundle of cell ``i``'s turn (its last output)."""
    cells = saved_json(notebook_file)["cells"]
    return dict(cells[i]["outputs"][-1]["data"])


def test_a_reload_while_the_card_waits_keeps_the_record(served: Served) -> None:
    """Issue 36: the page reloads while the plan card waits, and a second tab opens; the plan
    is approved by mouse in the reloaded page. Both show the finished turn (the cell went
    blank: the end of turn's display update never reaches a loaded output) and keep the
    control bar, and so does the saved notebook opened again (its widget view named a closed
    model)."""
    from playwright.sync_api import expect

    cells = [work("reload"),
             ("code", "%%claude --scripted browser_approve.yaml --plan --cwd $work\n"
                      "Plan a greeting"),
             CLOSING]
    folder = served.root / "reload"
    with notebook(served, "reload", cells) as (page, nb, errors):
        run_cell(page, nb, 0)
        run_cell(page, nb, 1)
        expect(button(nb.nth(1).locator(".pw-card-plan").first, "Approve")).to_be_visible()
        save(page, served.root / "reload.ipynb")
        nb = open_notebook(page, served.server, "reload.ipynb", len(cells))  # the reload
        second = served.context.new_page()  # a second tab, while the card waits
        second_errors = console_errors(second)
        try:
            tab = open_notebook(second, served.server, "reload.ipynb", len(cells)).nth(1)
            expect(button(tab.locator(".pw-card-plan").first, "Approve")).to_be_visible()
            cell = nb.nth(1)
            plan = cell.locator(".pw-card-plan").first
            page.wait_for_timeout(READING)
            button(plan, "Approve").click()
            card = cell.locator(".pw-card-tool", has_text="Write")
            expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            button(card, "Allow").click()
            assert written(folder / "hello.py"), "the approved Write did not run"
            for where in (cell, tab):
                done = where.locator(".pw-turn.pw-static", has_text="Done: the file is written.")
                expect(done).to_be_visible(timeout=CELL_TIMEOUT * 1000)
                expect(where.locator(".pw-turn.pw-static")).to_contain_text("Approved")
                expect(where.locator(".pw-control-bar")).to_contain_text("idle")
            shot(served, cell, "reload-done")
            shot(served, tab, "reload-second-tab")
            assert not gone(second_errors)
        finally:
            second.close()
        save(page, served.root / "reload.ipynb")
        view = saved_turn(served.root / "reload.ipynb", 1).get(
            "application/vnd.jupyter.widget-view+json", {})
        assert view.get("model_id"), f"the saved turn names no live model: {view}"
        # the file keeps what the page loaded (docs/cli.md#reload): it says nothing that the
        # decision made untrue (the saved-notebook check, issue 26; paths are this run's)
        bad = untrue(json.loads((served.root / "reload.ipynb").read_text(encoding="utf-8")),
                     ("a mode or model not reported", "a card waiting for you", "a traceback"),
                     widget_views=True)
        assert not bad, "\n".join(bad)
        # a later visitor (the kernel still runs) sees the finished turn
        nb = open_notebook(page, served.server, "reload.ipynb", len(cells))
        expect(nb.nth(1).locator(".pw-turn.pw-static", has_text="Done: the file is written.")
               ).to_be_visible()
        run_cell(page, nb, 2)
        expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text("closed")
        assert_no_errors(page)
        assert not gone(errors)


def test_start_fresh_after_a_reload_shows_the_new_card(served: Served) -> None:
    """Issue 36 with issue 31's stack: after a reload, "Approve, start fresh" brings the new
    conversation's card into the reloaded page (a display update never reaches it, so the
    views go inside the root widget it shows), and the cell ends with both turns' record."""
    from playwright.sync_api import expect

    cells = [work("fresh-reload"),
             ("code", "%%claude --scripted browser_approve.yaml --plan --cwd $work\n"
                      "Plan a greeting"),
             CLOSING]
    with notebook(served, "fresh-reload", cells) as (page, nb, errors):
        run_cell(page, nb, 0)
        run_cell(page, nb, 1)
        expect(button(nb.nth(1).locator(".pw-card-plan").first, "Approve")).to_be_visible()
        save(page, served.root / "fresh-reload.ipynb")
        nb = open_notebook(page, served.server, "fresh-reload.ipynb", len(cells))  # reload
        cell = nb.nth(1)
        page.wait_for_timeout(READING)
        button(cell.locator(".pw-card-plan").first, "Approve, start fresh").click()
        card = cell.locator(".pw-card-tool", has_text="Write")
        expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        button(card, "Allow").click()
        assert written(served.root / "fresh-reload" / "fresh.py"), "the Write did not run"
        for text in ("Done: the file is written.", "Plan a greeting"):
            expect(cell.locator(".pw-turn.pw-static", has_text=text).first).to_be_visible(
                timeout=CELL_TIMEOUT * 1000)
        shot(served, cell, "fresh-reload-done")
        run_cell(page, nb, 2)
        expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text("closed")
        assert_no_errors(page)
        assert not gone(errors)


def test_the_running_page_closes_and_a_second_tab_decides(served: Served) -> None:
    """Issue 36: the page that ran the cell closes (a closed tab, a crashed one) while the
    plan card waits; a second tab, opened from the saved notebook, decides by mouse. The
    second tab shows the finished turn and the bar, the file it saves says nothing false,
    and the notebook opened again while the kernel runs shows the finished turn."""
    from playwright.sync_api import expect

    cells = [work("closed"),
             ("code", "%%claude --scripted browser_approve.yaml --plan --cwd $work\n"
                      "Plan a greeting"),
             CLOSING]
    path = served.root / "closed.ipynb"
    with notebook(served, "closed", cells) as (page, nb, errors):
        run_cell(page, nb, 0)
        run_cell(page, nb, 1)
        expect(button(nb.nth(1).locator(".pw-card-plan").first, "Approve")).to_be_visible()
        save(page, path)
        second = served.context.new_page()
        second_errors = console_errors(second)  # the page that does the work from here on
        try:
            nb = open_notebook(second, served.server, "closed.ipynb", len(cells))
            cell = nb.nth(1)
            plan = cell.locator(".pw-card-plan").first
            expect(button(plan, "Approve")).to_be_visible()
            page.close()  # the page that ran the cell goes while the card waits
            second.wait_for_timeout(READING)
            button(plan, "Approve").click()
            card = cell.locator(".pw-card-tool", has_text="Write")
            expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            button(card, "Allow").click()
            assert written(served.root / "closed" / "hello.py"), "the approved Write did not run"
            done = cell.locator(".pw-turn.pw-static", has_text="Done: the file is written.")
            expect(done).to_be_visible(timeout=CELL_TIMEOUT * 1000)
            expect(cell.locator(".pw-turn.pw-static")).to_contain_text("Approved")
            expect(cell.locator(".pw-control-bar")).to_contain_text("idle")
            shot(served, cell, "closed-second-tab")
            save(second, path)
            bad = untrue(saved_json(path),
                         ("a mode or model not reported", "a card waiting for you", "a traceback"),
                         widget_views=True)
            assert not bad, "\n".join(bad)
            assert saved_turn(path, 1), "the saved file lost the cell's outputs"
            # opened again while the kernel runs: the finished turn
            nb = open_notebook(second, served.server, "closed.ipynb", len(cells))
            expect(nb.nth(1).locator(".pw-turn.pw-static", has_text="Done: the file is written.")
                   ).to_be_visible()
            run_cell(second, nb, 2)
            expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_no_errors(second)
            assert not gone(second_errors)
        finally:
            second.close()
        assert not gone(errors)  # (what the first page logged before it closed)
