"""A real Jupyter frontend in headless Chromium, for the browser tests: JupyterLab 4 or
Notebook 7, the same harness (measured recipes: /work/notes/browser.md, "Notebook 7").

``jupyter_server(tmp, root, ui)`` starts ``jupyter lab`` or ``jupyter notebook`` on 127.0.0.1
with a token and scratch HOME, config, data and runtime folders, and stops it (shutdown
request, then the process group, then anything left with our scratch HOME). Both UIs are built
from the same components, so the selectors are the same; only the command and the notebook's
URL differ. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupyter_pool
import pytest

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
SHOTS = ARTIFACTS / "screenshots"
"""Where the browser tests save their screenshots (made by :func:`notebook_with`)."""
CHROMIUM = Path("/usr/bin/chromium-headless-shell")
"""Debian's chromium-headless-shell: Chromium's headless shell, what Playwright itself runs
for headless tests. MEASURED (2026-12-07, JupyterLab 4.6 opening a notebook and running two
cells, side by side): 5.9 CPU-s against 8.5 for the full browser in its headless mode; CI's
cores are busy for the whole run, so its time is the suite's CPU time."""
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # the baseline compiler only (Sparkplug, no Maglev or TurboFan): a test page lives a minute
    # and runs little hot code. MEASURED (JupyterLab 4.6, a notebook opened and two cells run,
    # three pages, side by side in two rounds): 13.2-14.5 Chromium CPU-s against 15.2-17.6.
    "--js-flags=--max-opt=1",
]
UIS = ("lab", "notebook")  # JupyterLab 4, Notebook 7
UI_NAMES = {"lab": "JupyterLab", "notebook": "Notebook 7"}
# What MathJax leaves in the page when it typesets something (v2, v3/v4).
MATHJAX = "mjx-container, mjx-math, .MathJax, .MathJax_Display, .MathJax_Preview"
# Elements and attributes that must never appear in an output: each would be a live payload.
# (One exception, in assert_nothing_ran: a question card's own trusted <style>, RADIO_CSS, as
# it is, character for character.)
EXECUTABLE = (
    "script, iframe, object, embed, style, [onerror], [onload], [onclick], "
    "a[href^='javascript:' i], [src^='javascript:' i], :not(img)[src^='data:' i], "
    # a raster data: image renders (issue 25); any other data: image would be a payload
    "img[src^='data:' i]:not([src^='data:image/png;base64,' i]):not("
    "[src^='data:image/jpeg;base64,' i]):not([src^='data:image/jpg;base64,' i]):not("
    "[src^='data:image/gif;base64,' i]):not([src^='data:image/webp;base64,' i]), "
    # nor does an image from another server load (issue 25)
    "img[src^='http:' i], img[src^='https:' i], img[src^='//']"
)
CELL_TIMEOUT = 60  # seconds any one cell may run
UI_TIMEOUT = 30  # seconds any one thing may take to appear on the page
START_TIMEOUT = 60  # seconds the server may take to answer


@dataclass
class Server:
    ui: str
    base: str
    token: str
    env: dict[str, str]
    pid: int = 0
    log: Path = Path("/dev/null")
    prefix: str = ""
    """The test's folder, relative to what the server serves (a shared server serves ``/``)."""

    def url(self, name: str) -> str:
        """The page that opens notebook ``name`` (relative to the test's folder)."""
        path = urllib.parse.quote(f"{self.prefix}/{name}" if self.prefix else name)
        if self.ui == "lab":
            return f"{self.base}/lab/tree/{path}?reset&token={self.token}"
        return f"{self.base}/notebooks/{path}?token={self.token}"


def require_browser() -> None:
    """Missing parts fail (CI installs them), they do not skip."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: install Debian's chromium-headless-shell "
            "(apt-get install -y chromium-headless-shell; scripts/test does it as root)",
            pytrace=False,
        )
    for module, what in (("playwright", "playwright"), ("jupyterlab", "jupyterlab"),
                         ("notebook", "notebook>=7")):
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f"{what} is missing: pip install -e . --group browser", pytrace=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(config_dir: Path) -> None:
    """No news toast, no update check, and every cell kept in the DOM (no windowing).
    Notebook 7 reads the same user settings as JupyterLab."""
    user = config_dir / "lab" / "user-settings" / "@jupyterlab"
    for ext, name, value in (
        ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension", "tracker", {"windowingMode": "none"}),
    ):
        (user / ext).mkdir(parents=True, exist_ok=True)
        (user / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))


COLLAB_VENV = REPO / ".venv-collab"
"""A second venv, the project with jupyter-collaboration (scripts/test makes it): real-time
collaboration changes how every JupyterLab page holds a notebook, so it never goes into the
project's own venv, whose JupyterLab is the one without it."""


def require_collab() -> Path:
    """The collaboration venv's ``jupyter`` (missing: a failure that says how to make it)."""
    jupyter = COLLAB_VENV / "bin" / "jupyter"
    if not jupyter.exists():
        pytest.fail(f"{COLLAB_VENV} is missing: scripts/test makes it (python -m venv "
                    f"{COLLAB_VENV.name} && uv pip install --python "
                    f"{COLLAB_VENV.name}/bin/python -e . --group browser --group collab)",
                    pytrace=False)
    return jupyter


@contextlib.contextmanager
def jupyter_server(tmp: Path, root: Path, ui: str, jupyter: Path | None = None,
                   temp_in_home: bool = False, shared: bool = True) -> Iterator[Server]:
    """A Jupyter server for ``ui`` whose notebooks open from ``root``: this process's shared
    one (tests/jupyter_pool.py: lent, then given back with no kernel running and default
    settings), or with ``jupyter``, ``temp_in_home``, ``shared=False`` or while the shared one
    is lent, one of the test's own (:func:`own_server`)."""
    if shared and jupyter is None and not temp_in_home:
        with jupyter_pool.lend(ui, lambda t, r: own_server(t, r, ui), _settings) as lent:
            if lent is not None:
                yield dataclasses.replace(lent, prefix=str(root.resolve()).lstrip("/"))
                return
    with own_server(tmp, root, ui, jupyter, temp_in_home) as server:
        yield server


@contextlib.contextmanager
def own_server(tmp: Path, root: Path, ui: str, jupyter: Path | None = None,
               temp_in_home: bool = False) -> Iterator[Server]:
    """Run ``jupyter lab`` or ``jupyter notebook`` on 127.0.0.1 with a token, serving
    ``root``; yields the Server. Stops it and everything it started. ``jupyter``: another
    venv's (:data:`COLLAB_VENV`); its kernel is that venv's Python. ``temp_in_home``: TMPDIR
    inside the scratch HOME (a path under it shows as ``~/tmp/…``, as on a person's
    machine, not the test run's folder)."""
    assert ui in UIS, ui
    dirs = {k: tmp / k.lower() for k in (
        "HOME", "TMPDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
        "IPYTHONDIR",
    )}
    if temp_in_home:
        dirs["TMPDIR"] = dirs["HOME"] / "tmp"
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    _settings(dirs["JUPYTER_CONFIG_DIR"])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "JUPYTER_")) and k != "CLAUDECODE"}
    env.update({k: str(v) for k, v in dirs.items()})
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    token = secrets.token_hex(16)
    port = _free_port()
    jupyter = jupyter or Path(sys.executable).parent / "jupyter"
    log_path = tmp / f"jupyter-{ui}.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [str(jupyter), ui, "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert proc.poll() is None, f"jupyter {ui} exited:\n{tail(log_path)}"
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (
                f"jupyter {ui} not ready in {START_TIMEOUT} s:\n{tail(log_path)}"
            )
            time.sleep(0.2)
        yield Server(ui, base, token, env, proc.pid, log_path)
    finally:
        with contextlib.suppress(OSError):
            req = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
            urllib.request.urlopen(req, timeout=10).close()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        log.close()
        kill_leftovers(str(dirs["HOME"]))


def tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def our_processes(home: str) -> list[tuple[int, list[str]]]:
    """Processes (pid, argv) whose environment has our scratch HOME: the ones we started."""
    found = []
    marker = f"HOME={home}".encode()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if marker not in (p / "environ").read_bytes().split(b"\0"):
                continue
            argv = (p / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        found.append((int(p.name), argv))
    return found


def kill_leftovers(home: str) -> None:
    for pid, _argv in our_processes(home):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# -- the page ------------------------------------------------------------------------------------
def driver() -> contextlib.AbstractContextManager[Any]:
    """This process's Playwright (tests/jupyter_pool.py): what ``sync_playwright()`` gave each
    test, started once and parked between tests."""
    return jupyter_pool.driver()


def browser(pw: Any, profile: Path | None = None, width: int = 1280,
            height: int = 1400) -> Any:
    """A new browser context (cookies, storage and pages of its own, as a profile of its own)
    in this process's headless Chromium; ``profile`` is no longer used (close the context)."""
    return jupyter_pool.chromium(pw, CHROMIUM, CHROMIUM_ARGS).new_context(
        viewport={"width": width, "height": height})


def open_notebook(page: Any, server: Server, name: str, n_cells: int) -> Any:
    """Open notebook ``name``; wait until its ``n_cells`` cells show and its kernel is idle,
    and select the first cell (command mode). Returns the cells' locator."""
    from playwright.sync_api import expect

    page.goto(server.url(name), timeout=UI_TIMEOUT * 1000)
    panel = page.locator(".jp-NotebookPanel:visible")
    cells = panel.locator(".jp-Notebook .jp-Cell")
    expect(cells).to_have_count(n_cells, timeout=START_TIMEOUT * 1000)
    # The kernel is up and idle (the toolbar names it, the indicator says idle).
    try:
        expect(panel.locator(".jp-Toolbar-kernelName")).not_to_have_text(
            re.compile("No Kernel"), timeout=START_TIMEOUT * 1000)
        expect(panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
               ).to_have_count(1, timeout=START_TIMEOUT * 1000)
    except AssertionError as e:  # the server's word on its kernels (a shared one's log goes)
        raise AssertionError(f"{e}\n-- the server's log:\n{tail(server.log, 60)}") from None
    cells.first.locator(".jp-InputPrompt, .jp-Cell-inputArea").first.click()
    page.keyboard.press("Escape")
    return cells


def run_cell(page: Any, cells: Any, i: int, wait: bool = True) -> None:
    """Run cell ``i`` with Shift+Enter (as a user would); wait until a code cell has finished
    (``wait=False``: only until it was sent)."""
    from playwright.sync_api import expect

    cell = cells.nth(i)
    active = re.compile(r"\bjp-mod-active\b")
    if not active.search(cell.get_attribute("class") or ""):
        cell.locator(".jp-InputPrompt").first.click()  # a click on a button moved the focus
        page.keyboard.press("Escape")
    expect(cell).to_have_class(active)
    page.keyboard.press("Shift+Enter")
    if wait and "jp-CodeCell" in (cell.get_attribute("class") or ""):
        expect(cell.locator(".jp-InputPrompt")).to_have_text(
            re.compile(r"\[\d+\]"), timeout=CELL_TIMEOUT * 1000
        )


def record_dialogs(page: Any) -> list[str]:
    """Dismiss every dialog (alert, confirm, prompt) the page opens; returns the list of them."""
    dialogs: list[str] = []

    def on_dialog(d: Any) -> None:
        dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    return dialogs


def assert_no_math(where: Any) -> None:
    typeset = where.locator(MATHJAX)
    found = [typeset.nth(k).evaluate("e => e.outerHTML.slice(0, 200)")
             for k in range(typeset.count())]
    assert found == [], f"model text was typeset as math: {found}"


def assert_nothing_ran(page: Any, dialogs: list[str]) -> None:
    pwned = page.evaluate("() => window.__pwned")
    assert pwned is None and dialogs == [], (
        f"a hostile payload ran: window.__pwned = {pwned}, dialogs: {dialogs}"
    )
    from plan_widgets.widgets.kinds.question import RADIO_CSS

    live = page.locator(".jp-OutputArea").locator(EXECUTABLE)
    found = [html for k in range(live.count())
             if (html := live.nth(k).evaluate("e => e.outerHTML")) != RADIO_CSS]
    assert found == [], f"executable HTML reached the page: {[x[:200] for x in found]}"


def assert_no_errors(page: Any) -> None:
    errors = page.locator(".jp-OutputArea-output", has_text="most recent call last")
    assert errors.count() == 0, f"a cell failed:\n{errors.first.inner_text()}"


def code_notebook(cells: list[tuple[str, str]]) -> dict[str, Any]:
    """An nbformat 4 notebook of (cell_type, source) cells, with the kernelspec the server's
    kernel has (without one, the frontends ask for a kernel)."""
    out = []
    for i, (kind, src) in enumerate(cells):
        cell: dict[str, Any] = {"id": f"cell-{i}", "cell_type": kind, "metadata": {},
                                "source": src}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return {
        "nbformat": 4, "nbformat_minor": 5, "cells": out,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    }


OPENING = ("code", "%load_ext plan_widgets\n"
                   "import plan_widgets\n"
                   "from pathlib import Path\n"
                   "work = Path('work').resolve()\n"
                   "work.mkdir(exist_ok=True)")
"""The first cell of most browser notebooks: the extension, and ``work`` for ``--cwd``."""
CLOSING = ("code", "await plan_widgets.get().close()\nprint('closed')")
"""The last cell: the session closes, so the server stops with no CLI left."""


def notebook_with(tmp_path: Path, script: Path, name: str,
                  cells: list[tuple[str, str]]) -> tuple[Path, Path]:
    """A server root in ``tmp_path`` holding ``script`` and the notebook ``name`` made of
    ``cells``, and the screenshots folder: ``(root, notebook)``."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(script, root / script.name)
    notebook = root / name
    notebook.write_text(json.dumps(code_notebook(cells), indent=1), encoding="utf-8")
    SHOTS.mkdir(parents=True, exist_ok=True)
    return root, notebook
