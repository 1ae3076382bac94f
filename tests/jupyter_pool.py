"""What the browser tests of one process share: one Playwright driver, one headless Chromium,
and one Jupyter server per UI (and environment), each lent to one test at a time.

Why: CI's 2 cores are busy for the whole run (measured: 1.98 of 2 busy from the first test to
the last), so its time is the suite's CPU time. Each browser test used to start its own
server (~5 CPU-s from start to stop), Playwright driver (~1.5 CPU-s) and Chromium; lent
instead, a test pays for its own pages only. A test still gets what it had: its own browser
context (cookies, storage and pages of its own, as a profile of its own), its own folder (the
server serves ``/``; the test's notebooks open from its folder, and their kernels start
there), and a server with no kernel running and the default settings, as a fresh server has.

Given back after each test: every kernel shut down (the server's own API, as a person's
"Shut Down All Kernels"), anything still running with the server's HOME killed, what the
kernels and CLIs wrote in the scratch HOME, TMPDIR and IPYTHONDIR removed, the user settings a
test changed (a theme, say) reset. A server or browser that died is started again.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DRIVER: dict[str, Any] = {}
"""This process's Playwright ("pw"), its event loop ("loop") and Chromium ("browser"), started
at first use."""
_HELD = [0]
"""How many ``driver()`` blocks are open now (a module's fixture and its tests may nest)."""


@contextlib.contextmanager
def driver() -> Iterator[Any]:
    """This process's Playwright, started once and parked between browser tests.

    Playwright's sync API runs its asyncio loop in a greenlet of the main thread and leaves it
    set as the thread's running loop; a later test in the same worker that calls
    ``asyncio.run`` (or jupyter_client's blocking API) then fails with "cannot be called from
    a running event loop" (CI: 139 tests, once the driver outlived its test). So the loop is
    unset when the last block closes and set again when the next one opens (measured: pages,
    ``asyncio.run`` and a jupyter_client kernel in turns, in one process, all work)."""
    if "pw" not in _DRIVER:
        from playwright.sync_api import sync_playwright

        _DRIVER["pw"] = sync_playwright().start()
        _DRIVER["loop"] = asyncio.events._get_running_loop()
        atexit.register(_stop_driver)
    elif _HELD[0] == 0:
        asyncio.events._set_running_loop(_DRIVER["loop"])
    _HELD[0] += 1
    try:
        yield _DRIVER["pw"]
    finally:
        _HELD[0] -= 1
        if _HELD[0] == 0:
            asyncio.events._set_running_loop(None)


def chromium(pw: Any, executable: Path, args: list[str]) -> Any:
    """This process's headless Chromium (started again if it died)."""
    b = _DRIVER.get("browser")
    if b is None or not b.is_connected():
        b = _DRIVER["browser"] = pw.chromium.launch(
            executable_path=str(executable), headless=True, args=args)
    return b


def _stop_driver() -> None:
    if "pw" not in _DRIVER:
        return
    asyncio.events._set_running_loop(_DRIVER["loop"])
    with contextlib.suppress(Exception):
        if "browser" in _DRIVER:
            _DRIVER.pop("browser").close()
    with contextlib.suppress(Exception):
        _DRIVER.pop("pw").stop()
    asyncio.events._set_running_loop(None)


@dataclass
class Lent:
    """One shared server: what started it, and whether a test has it now."""

    server: Any  # jupyter_ui.Server
    stack: ExitStack
    busy: bool = False


_SERVERS: dict[tuple[str, ...], Lent] = {}
_IGNORED = ("PYTEST_CURRENT_TEST",)
"""Variables that change from test to test and mean nothing to a server."""


def env_key(ui: str) -> tuple[str, ...]:
    """A server is shared by the tests that would have started it with the same environment
    (a test that sets a variable its kernels must see gets a server of its own)."""
    return (ui, *sorted(f"{k}={v}" for k, v in os.environ.items() if k not in _IGNORED))


@contextlib.contextmanager
def lend(ui: str, start: Callable[[Path, Path], AbstractContextManager[Any]],
         settings: Callable[[Path], None]) -> Iterator[Any | None]:
    """The shared server for ``ui`` (None if it is lent already: the caller starts its own).
    ``start(tmp, root)`` starts a server (jupyter_ui's); ``settings(config_dir)`` writes the
    default user settings."""
    key = env_key(ui)
    lent = _SERVERS.get(key)
    if lent is not None and lent.busy:  # another test of this process has it (a module's)
        yield None
        return
    if lent is not None and not _alive(lent.server):
        _SERVERS.pop(key).stack.close()
        lent = None
    if lent is None:
        stack = ExitStack()
        tmp = Path(tempfile.mkdtemp(prefix=f"pw-shared-{ui}-"))
        stack.callback(_rmtree, tmp)  # after the server's stop (an ExitStack unwinds backwards)
        server = stack.enter_context(start(tmp, Path("/")))
        lent = _SERVERS[key] = Lent(server, stack)
    lent.busy = True
    try:
        yield lent.server
    finally:
        try:
            _give_back(lent.server, settings)
        finally:
            lent.busy = False


def _alive(server: Any) -> bool:
    try:
        with urllib.request.urlopen(f"{server.base}/api/status?token={server.token}",
                                    timeout=5) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _api(server: Any, path: str, method: str = "GET") -> Any:
    req = urllib.request.Request(f"{server.base}{path}?token={server.token}", method=method)
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read()
    return json.loads(body) if body else None


def _give_back(server: Any, settings: Callable[[Path], None]) -> None:
    """No kernel left running, nothing left with the server's HOME, default settings."""
    from jupyter_ui import our_processes

    with contextlib.suppress(OSError, ValueError):
        for k in _api(server, "/api/kernels"):
            with contextlib.suppress(OSError):
                _api(server, f"/api/kernels/{k['id']}", "DELETE")  # waits for its shutdown
        deadline = time.monotonic() + 60  # (bounded: under load a shutdown takes seconds)
        while _api(server, "/api/kernels") and time.monotonic() < deadline:
            time.sleep(0.5)
    keep = {server.pid}
    for pid, _argv in our_processes(server.env["HOME"]):
        if pid not in keep:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for var in ("HOME", "TMPDIR", "IPYTHONDIR"):  # what the CLIs and kernels wrote: ~/.claude…
        _empty(Path(server.env[var]))
    config = Path(server.env["JUPYTER_CONFIG_DIR"])
    for sub in ("user-settings", "workspaces"):
        _empty(config / "lab" / sub)
    settings(config)


def _rmtree(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _empty(folder: Path) -> None:
    """Everything in ``folder`` removed (the folder stays: the server was started with it)."""
    import shutil

    if folder.is_dir():
        for child in folder.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    child.unlink()


def _stop_servers() -> None:
    while _SERVERS:
        _key, lent = _SERVERS.popitem()
        with contextlib.suppress(Exception):
            lent.stack.close()


atexit.register(_stop_servers)
