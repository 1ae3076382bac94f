"""Issue 42: what a card's button acts on is the text the person sees in its box, whatever the
kernel is doing. In JupyterLab 4 and Notebook 7, by mouse and keyboard: a plan retyped in the
card's editor, left once (Tab) and typed on, then Approve, all while the kernel is stuck in a
long call that holds Python's lock (as a C extension's long computation does): once the kernel
goes on, the plan it approved is the text in the box.

Before (ipywidgets' ``Textarea``), the page sent the box's text on each blur, one update at a
time per model: the first blur's update waited for the kernel, the second one (the blur of the
click on Approve) waited in the page behind it, and the click went out at once; the kernel
approved the text of the first blur. ``widgets/typed.py`` sends the text as it is typed, in
messages the page never holds back.

The kernel is held by a cell waiting on a pipe in ``poll`` called through ``ctypes.PyDLL``
(which keeps Python's lock), for at most a minute; the test writes to the pipe once the person
has clicked. Screenshots: ``test-artifacts/screenshots/<ui>-typed-*.png``.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

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

SCRIPT = Path(__file__).parent / "scripts" / "cards_plan.yaml"
HOLD = """import ctypes, os
from pathlib import Path

class PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short), ("revents", ctypes.c_short)]

fd = os.open("hold.fifo", os.O_RDONLY | os.O_NONBLOCK)
Path("held").touch()
# the whole kernel waits (Python's lock held) until the test writes, a minute at most
ctypes.PyDLL(None).poll(ctypes.byref(PollFd(fd, 1, 0)), 1, 60_000)
os.close(fd)
print("let go")"""
FIRST = "# Plan: a red banner\n\n1. Paint the banner red.\n"
MORE = "2. Give it a thin border.\n"


def _wait_for(path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"the kernel never started holding ({path.name})"
        time.sleep(0.1)


def _let_go(fifo: Path) -> None:
    """Write to the pipe the kernel waits on (it stopped waiting by itself if none reads)."""
    with contextlib.suppress(OSError):
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"x")
        os.close(fd)


@pytest.mark.parametrize("ui", UIS)
def test_approve_acts_on_the_typed_plan_while_the_kernel_is_held(
        ui: str, tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect

    cells = [OPENING,
             ("code", "%%claude --scripted cards_plan.yaml --plan --mode default --cwd $work\n"
                      "Plan a banner for the landing page"),
             ("code", HOLD),
             CLOSING]
    root, _nb = notebook_with(tmp_path, SCRIPT, "typed.ipynb", cells)
    fifo = root / "hold.fifo"
    os.mkfifo(fifo)
    with jupyter_server(tmp_path, root, ui) as server, driver() as pw:
        context = browser(pw, tmp_path / "chromium-profile")
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT * 1000)
        try:
            nb = open_notebook(page, server, "typed.ipynb", len(cells))
            run_cell(page, nb, 0)
            run_cell(page, nb, 1)
            card = nb.nth(1).locator(".pw-card-plan:not(.pw-static)").first

            def button(label: str) -> object:
                return card.locator("button.jupyter-button.widget-button:not([disabled])",
                                    has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))

            button("Edit").click()  # type: ignore[attr-defined]
            box = card.locator(".pw-plan-edit textarea")
            expect(box).to_have_value(re.compile("banner"), timeout=CELL_TIMEOUT * 1000)
            run_cell(page, nb, 2, wait=False)
            _wait_for(root / "held", CELL_TIMEOUT)
            try:
                box.click()
                box.press("Control+A")
                box.press_sequentially(FIRST)
                box.press("Tab")  # the person leaves the box, then comes back and types on
                box.click()
                box.press("Control+End")
                box.press_sequentially(MORE)
                expect(box).to_have_value(FIRST + MORE)
                button("Approve").click()  # type: ignore[attr-defined]
            finally:
                _let_go(fifo)
            expect(nb.nth(2).locator(".jp-OutputArea-output")).to_contain_text(
                "let go", timeout=CELL_TIMEOUT * 1000)
            decided = nb.nth(1).locator(".pw-card-plan.pw-static").first
            expect(decided.locator(".pw-card-status")).to_contain_text(
                "Approved", timeout=CELL_TIMEOUT * 1000)
            decided.scroll_into_view_if_needed()
            decided.screenshot(path=str(SHOTS / f"{ui}-typed-approved.png"))
            expect(decided).to_contain_text("Plan approved, edited by you")
            expect(decided).to_contain_text("Give it a thin border.")
            run_cell(page, nb, 3)
            expect(nb.nth(3).locator(".jp-OutputArea-output")).to_contain_text("closed")
            assert_no_errors(page)
        except BaseException:
            page.screenshot(path=str(SHOTS / f"{ui}-typed-failure.png"), full_page=True)
            raise
        finally:
            context.close()
