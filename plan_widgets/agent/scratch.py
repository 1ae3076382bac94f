"""A private temporary folder for one CLI process, removed when the session ends.

MEASURED (CLI 2.1.332): the Claude Code CLI writes under ``$TMPDIR`` and leaves it there after
a clean exit: ``claude-<uid>/<cwd with dashes>/<session id>/`` (``started``, ``tasks``),
``claude-<uid>/fswatch-probe-*/`` and ``cc-socks/<pid>.sock``. Giving each CLI its own
``TMPDIR`` (a short path: the sockets' paths must stay under 108 bytes, so not inside the log
folder) and removing it when the session ends leaves nothing behind after a clean stop.

A kernel that is killed (not shut down) cannot remove its folder: a test run left 71. So each
folder names its owner (the kernel's pid and start time, in :data:`OWNER`), and the first
folder a process makes sweeps away, in a thread, the folders whose owner is gone: its pid no
longer runs, or runs another process (the start time differs: the pid was reused). Another
live kernel's folder is kept, and so is a folder with no owner record (made by an older
version, whose kernel may still run). Nothing is said unless a removal fails (a log line).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..store.lock import STARTED, Holder, start_time

PREFIX = "plan_widgets-"
OWNER = ".plan_widgets-owner"
"""The owner record in each folder: JSON with ``pid``, ``host``, ``since``, ``started_at``."""

log = logging.getLogger(__name__)
_swept = threading.Event()
_UID = os.getuid() if hasattr(os, "getuid") else 0  # (Windows: st_uid is always 0)


class ScratchDir:
    """``env()`` goes into the CLI's environment; ``remove()`` when the CLI has exited."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX))  # 0700
        pid = os.getpid()
        (self.path / OWNER).write_text(json.dumps({
            "pid": pid, "host": socket.gethostname(), "since": time.time(),
            STARTED: start_time(pid)}), encoding="utf-8")
        if not _swept.is_set():
            _swept.set()
            threading.Thread(target=sweep, name="plan_widgets-sweep", daemon=True).start()

    def env(self) -> dict[str, str]:
        p = str(self.path)
        return {"TMPDIR": p, "TMP": p, "TEMP": p}

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def owner(folder: Path) -> Holder | None:
    """The process that made ``folder``, from its owner record (None: no readable record)."""
    try:
        data = json.loads((folder / OWNER).read_text(encoding="utf-8"))
        return Holder(pid=int(data["pid"]), host=data.get("host"), since=data.get("since"),
                      started=data.get(STARTED))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def sweep(root: str | None = None) -> list[Path]:
    """Remove the scratch folders under ``root`` (the temporary directory) whose owner
    process is gone; returns them. Only this user's folders with an owner record count."""
    removed: list[Path] = []
    base = Path(root or tempfile.gettempdir())
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(PREFIX)]
    except OSError as e:
        log.warning("plan_widgets: could not look for leftover scratch folders in %s: %s",
                    base, e)
        return removed
    for folder in candidates:
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != _UID:
                continue
        except OSError:
            continue
        who = owner(folder)
        if who is None or who.alive:
            continue
        failed = _rmtree(folder)
        if failed and folder.exists():
            log.warning("plan_widgets: could not remove the leftover scratch folder %s "
                        "(its kernel, pid %s, is gone): %s", folder, who.pid, failed)
        else:
            removed.append(folder)
    return removed


def _rmtree(folder: Path) -> str | None:
    """Remove ``folder`` with what it holds; the first failure, if any."""
    failed: list[str] = []

    def note(_func: object, path: str, exc: object) -> None:
        err = exc[1] if isinstance(exc, tuple) else exc
        failed.append(f"{path}: {err}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=note)
    else:
        shutil.rmtree(folder, onerror=note)
    return failed[0] if failed else None
