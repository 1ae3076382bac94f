"""Issue 41 point 1 and issue 42 point 2 in JupyterLab 4 and Notebook 7, by mouse:

- Run > Run All Cells on ``[the extension; %%claude --plan (its approved work writes
  hello.txt); print(open(...hello.txt).read())]`` with default settings: the print cell waits
  while the cards wait (the plan, then the Write, approved by mouse over the page's kernel
  subshell) and prints the file;
- a cell run by hand while the card waits runs at once; the kernel's stop button (the
  toolbar's) then ends the card, whose cell had returned;
- JupyterLab with "Kernel Comms over subshells" set to Disabled, on a kernel where a click
  cannot reach a busy cell (ipykernel 7.3): the plan cell says in one line that the cells
  after it run on, nothing hangs, and the card still decides afterwards.

Screenshots: ``test-artifacts/screenshots/<ui>-runall-<what>.png``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
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
    browser,
    code_notebook,
    driver,
    jupyter_server,
    open_notebook,
    require_browser,
    run_cell,
)

from plan_widgets.ipython.runall import NOTICE

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SCRIPT = Path(__file__).parent / "scripts" / "run_all.yaml"
READING = 2000  # a person's pause (ms) before a click
OLD_IPYKERNEL = "ipykernel==7.3.0"
"""The newest ipykernel that handles a widget message on the main shell only between cells."""
KERNEL = "python3-ipykernel73"


def _open(name: str) -> tuple[str, str]:
    return ("code", OPENING[1].replace("Path('work')", f"Path('{name}')"))


PLAN = ("code", "%%claude --scripted run_all.yaml --plan --cwd $work\nWrite hello.txt")
READ = ("code", "print(open(work / 'hello.txt').read())")


@contextlib.contextmanager
def served(tmp: Path, ui: str, settings: dict[str, Any] | None = None,
           kernel_env: dict[str, str] | None = None) -> Iterator[tuple[Server, Path, Any]]:
    """A server of ``ui`` (``settings``: more user settings, by plugin; ``kernel_env``: the
    python3 kernel's environment) and one Chromium: ``(server, root, context)``."""
    require_browser()

    root = tmp / "root"
    root.mkdir()
    shutil.copy(SCRIPT, root / SCRIPT.name)
    SHOTS.mkdir(parents=True, exist_ok=True)
    config = tmp / "jupyter_config_dir" / "lab" / "user-settings"  # (jupyter_server's folder)
    for plugin, value in (settings or {}).items():
        ext, name = plugin.split(":")
        (config / ext).mkdir(parents=True, exist_ok=True)
        (config / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    if kernel_env:
        # a kernel of its own name (the venv's python3 comes before the user's folder)
        spec = tmp / "jupyter_data_dir" / "kernels" / KERNEL
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNEL, "language": "python", "env": kernel_env}))
    own = bool(settings or kernel_env)  # its own settings or kernel: a server of its own
    with jupyter_server(tmp, root, ui, shared=not own) as server, driver() as pw:
        context = browser(pw, tmp / "chromium-profile")
        try:
            yield server, root, context
        finally:
            context.close()


@contextlib.contextmanager
def notebook(server: Server, root: Path, context: Any, name: str,
             cells: list[tuple[str, str]]) -> Iterator[tuple[Any, Any]]:
    from playwright.sync_api import expect

    nb = code_notebook(cells)
    if (server.env["JUPYTER_DATA_DIR"] and
            (Path(server.env["JUPYTER_DATA_DIR"]) / "kernels" / KERNEL).exists()):
        nb["metadata"]["kernelspec"].update(name=KERNEL, display_name=KERNEL)
    (root / f"{name}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    page = context.new_page()
    try:
        page.set_default_timeout(UI_TIMEOUT * 1000)
        expect.set_options(timeout=UI_TIMEOUT * 1000)
        yield page, open_notebook(page, server, f"{name}.ipynb", len(cells))
    except BaseException:
        with contextlib.suppress(Exception):
            page.screenshot(path=str(SHOTS / f"{server.ui}-runall-{name}-failure.png"),
                            full_page=True)
        raise
    finally:
        page.close()


def button(where: Any, label: str) -> Any:
    return where.locator("button.jupyter-button.widget-button:not([disabled])",
                         has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))


def run_all(page: Any) -> None:
    """Run > Run All Cells, from the menu bar."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def output(cell: Any) -> Any:
    return cell.locator(".jp-OutputArea-output")


def approve_and_allow(cell: Any, page: Any) -> None:
    """Approve the plan as the picker came (Manual), then Allow the Write, by mouse."""
    from playwright.sync_api import expect

    plan = cell.locator(".pw-card-plan").first
    expect(button(plan, "Approve")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
    page.wait_for_timeout(READING)
    button(plan, "Approve").click()
    card = cell.locator(".pw-card-tool", has_text="Write")
    expect(button(card, "Allow")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
    button(card, "Allow").click()


@pytest.mark.parametrize("ui", UIS)
def test_run_all_waits_for_the_approved_work(tmp_path: Path, ui: str) -> None:
    from playwright.sync_api import expect

    cells = [_open("runall"), PLAN, READ, CLOSING]
    with served(tmp_path, ui) as (server, root, context), \
            notebook(server, root, context, "runall", cells) as (page, nb):
        # the first cell by hand: the page answers the presence probe between cells, so a
        # slow answer cannot make the run look unattended (which waits for the whole turn
        # for another reason: docs/unattended.md)
        run_cell(page, nb, 0)
        run_all(page)
        plan = nb.nth(1).locator(".pw-card-plan").first
        expect(button(plan, "Approve")).to_be_visible(timeout=CELL_TIMEOUT * 1000)
        page.wait_for_timeout(READING)
        # the cells below wait while the card waits
        expect(nb.nth(2).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\*\]"))
        expect(output(nb.nth(2))).to_have_count(0)
        approve_and_allow(nb.nth(1), page)
        expect(output(nb.nth(2))).to_contain_text("hello from the agent",
                                                  timeout=CELL_TIMEOUT * 1000)
        expect(output(nb.nth(3))).to_contain_text("closed", timeout=CELL_TIMEOUT * 1000)
        assert NOTICE not in nb.nth(1).inner_text()
        nb.nth(2).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"{ui}-runall-done.png"))


@pytest.mark.parametrize("ui", UIS)
def test_a_cell_by_hand_runs_at_once_and_the_stop_button_ends_the_card(
        tmp_path: Path, ui: str) -> None:
    from playwright.sync_api import expect

    cells = [_open("byhand"), PLAN, ("code", "print('looked at the data')"), CLOSING]
    with served(tmp_path, ui) as (server, root, context), \
            notebook(server, root, context, "byhand", cells) as (page, nb):
        run_cell(page, nb, 0)
        run_cell(page, nb, 1)  # returns at the card: nothing waits behind it
        plan = nb.nth(1).locator(".pw-card-plan").first
        expect(button(plan, "Approve")).to_be_visible()
        run_cell(page, nb, 2)
        expect(output(nb.nth(2))).to_contain_text("looked at the data")
        expect(button(plan, "Approve")).to_be_visible()  # the card still waits
        page.wait_for_timeout(READING)
        page.locator(".jp-NotebookPanel:visible [data-command='notebook:interrupt-kernel']"
                     ).first.click()
        expect(button(plan, "Approve")).to_have_count(0, timeout=CELL_TIMEOUT * 1000)
        expect(nb.nth(1)).to_contain_text(re.compile("interrupted", re.I))
        expect(nb.nth(1)).not_to_contain_text("Waiting for your decision")
        nb.nth(1).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"{ui}-runall-stopped.png"))
        assert not (root / "byhand" / "hello.txt").exists()
        run_cell(page, nb, 3)
        expect(output(nb.nth(3))).to_contain_text("closed")


@pytest.fixture(scope="module")
def old_ipykernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ipykernel 7.3 in a folder that shadows the venv's (PYTHONPATH), as
    tests/test_e2e_ipykernel6.py does for 6.29."""
    target = tmp_path_factory.mktemp("ipykernel73")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), OLD_IPYKERNEL], check=True, timeout=300)
    return target


def test_subshells_off_says_the_cells_run_on(tmp_path: Path, old_ipykernel: Path) -> None:
    from playwright.sync_api import expect

    opening = _open("off")[1] + "\nimport ipykernel\nprint(ipykernel.__version__)"
    cells = [("code", opening), PLAN, READ,
             ("code", "print(get_ipython().kernel.shell_channel_thread.manager.list_subshell())")]
    off = {"@jupyterlab/apputils-extension:kernels-settings": {"commsOverSubshells": "disabled"}}
    with served(tmp_path, "lab", off, {"PYTHONPATH": str(old_ipykernel)}) as (
            server, root, context), notebook(server, root, context, "off", cells) as (page, nb):
        run_cell(page, nb, 0)
        expect(output(nb.nth(0))).to_have_text("7.3.0")
        run_all(page)
        # nothing waits on a click that cannot come: the plan cell says so and returns, the
        # cell after it runs on (and fails, which ends Run All there); the kernel is idle
        expect(nb.nth(1)).to_contain_text(NOTICE, timeout=CELL_TIMEOUT * 1000)
        expect(output(nb.nth(2))).to_contain_text("FileNotFoundError",
                                                  timeout=CELL_TIMEOUT * 1000)
        run_after_an_error(page, nb, 3)  # the page opened no subshell
        expect(output(nb.nth(3))).to_have_text("[]")
        nb.nth(1).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "lab-runall-subshells-off.png"))
        # the card decides between cells, and the cell run again reads the work
        approve_and_allow(nb.nth(1), page)
        assert written(root / "off" / "hello.txt")
        run_cell(page, nb, 2)
        expect(output(nb.nth(2))).to_contain_text("hello from the agent")


def run_after_an_error(page: Any, nb: Any, i: int) -> None:
    """Run cell ``i`` after an error ended Run All: ipykernel aborts the requests it had
    queued, and one sent before its abort ends is aborted too (the cell's prompt stays
    ``[ ]``; seen in CI at load 9, the cell run the moment the error showed). So: once Run
    All's own request for the cell was aborted, run it; if that one was aborted as well, run
    it again, as a person would (bounded: twice)."""
    from playwright.sync_api import expect

    prompt = nb.nth(i).locator(".jp-InputPrompt")
    expect(prompt).to_have_text(re.compile(r"^\[ \]:$"), timeout=CELL_TIMEOUT * 1000)
    run_cell(page, nb, i, wait=False)
    try:
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=10_000)
    except AssertionError:
        if prompt.inner_text().strip() != "[ ]:":
            raise  # still running, or another state: not an abort
        run_cell(page, nb, i)


def written(path: Path) -> bool:
    """Whether ``path`` appears within a cell's time (polled, bounded; no cell runs)."""
    import time

    deadline = time.monotonic() + CELL_TIMEOUT
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return path.exists()
