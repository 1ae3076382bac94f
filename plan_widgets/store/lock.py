"""One writer per session log: a cross-process lock, and who holds it.

Opening a log for writing (:class:`plan_widgets.store.EventLog`) takes ``<log>.lock`` with
`filelock <https://pypi.org/project/filelock/>`_ (``flock(2)`` on Unix). A second opener, in
this process or another, gets :class:`LogLocked`, one line naming the holder and the way out.
The holder is described in a sidecar file, ``<log>.holder`` (JSON: pid, host, since, and the
process's start time, as `psutil <https://pypi.org/project/psutil/>`_ tells it), written once
the lock is taken and removed when it is released.

A lock left by a process that died is taken over at once. MEASURED (Linux 6.18, filelock
4.3.2, ``tests/test_store.py``): after ``kill -9`` of the holder, the next opener got the
lock on its first, non-blocking try (0.4 ms): ``flock`` locks belong to the open file, which the
kernel closes when its process dies, so the lock goes with the process. A child process the
holder had started (the kernel's CLI, say) does not keep it: the descriptor is not inherited
(Python opens files close-on-exec). The sidecar a killed holder leaves behind is stale, and is
recognized as such: its pid is gone (or is another process: the start time differs), and the
next holder overwrites it.

On a file system without ``flock`` filelock falls back to its soft lock (a marker file); that
case was not measured here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from filelock import FileLock, Timeout

from ..model.errors import OptionError

LOCK_SUFFIX = ".lock"
HOLDER_SUFFIX = ".holder"
FILE_MODE = 0o600
"""Logs, locks and sidecars are readable by their owner only (they hold prompts and plans)."""


@dataclass(frozen=True)
class Holder:
    """Who holds a session log open for writing."""

    pid: int | None
    host: str | None
    since: float | None
    started: float | None = None
    """The holder process's start (seconds since the epoch): tells a pid that was reused
    after the holder died from the holder itself."""

    @property
    def here(self) -> bool:
        """Whether the holder runs on this host."""
        return self.host is None or self.host == socket.gethostname()

    @property
    def alive(self) -> bool:
        """Whether the holder process still runs (on another host: assumed so)."""
        if not self.here:
            return True
        if self.pid is None:
            return True  # unknown: trust the lock
        if not _pid_alive(self.pid):
            return False
        if self.started is None:
            return True
        now = _start_time(self.pid)
        return now is None or abs(now - self.started) <= START_SLACK

    def describe(self) -> str:
        """``pid 1234 on host vm, since 14:03:12`` (what is known)."""
        parts = [f"pid {self.pid}" if self.pid is not None else "an unknown process"]
        if self.host:
            parts[0] += f" on host {self.host}"
        if self.since:
            day = time.strftime("%Y-%m-%d", time.localtime(self.since))
            today = time.strftime("%Y-%m-%d")
            fmt = "%H:%M:%S" if day == today else "%Y-%m-%d %H:%M:%S"
            parts.append("since " + time.strftime(fmt, time.localtime(self.since)))
        return ", ".join(parts)


class LogUnavailable(OptionError):
    """The session log cannot be opened for writing (its folder cannot be made or written,
    no file descriptor is left, ...). The message is one line: the cause and the way out."""


class LogLocked(LogUnavailable):
    """The session log is open for writing elsewhere (another kernel, usually): one writer per
    session. ``holder`` says who (None if it could not be told)."""

    def __init__(self, path: Path, holder: Holder | None) -> None:
        self.path = path
        self.holder = holder
        sid = path.name.removesuffix(".jsonl")
        if holder is not None and holder.here and holder.pid == os.getpid():
            where = f"is already open in this process ({holder.describe()})"
            out = "close it first (%claude stop, or await session.close())"
        else:
            who = holder.describe() if holder is not None else "an unknown process"
            where = f"is open in another kernel ({who})"
            out = ("stop it there (%claude stop) or shut that kernel down, then run this again; "
                   "or start a new session here (--new)")
        super().__init__(f"session {sid} {where}: {out}")


def lock_path(log: Path) -> Path:
    return log.with_name(log.name + LOCK_SUFFIX)


def holder_path(log: Path) -> Path:
    return log.with_name(log.name + HOLDER_SUFFIX)


def read_holder(log: Path) -> Holder | None:
    """The holder the sidecar of ``log`` names (None if there is none or it is unreadable).

    It may be stale: see :attr:`Holder.alive`."""
    try:
        data = json.loads(holder_path(log).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None

    def num(key: str) -> Any:
        v = data.get(key)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    pid = num("pid")
    host = data.get("host") if isinstance(data.get("host"), str) else None
    return Holder(pid=int(pid) if pid is not None else None, host=host, since=num("since"),
                  started=num(STARTED))


class LogLock:
    """The write lock of one log file (not reentrant: one holder object at a time)."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self._lock = FileLock(str(lock_path(log)), mode=FILE_MODE, thread_local=False)
        self.held = False

    def acquire(self) -> None:
        """Take the lock without waiting; :class:`LogLocked` if another holds it.

        OSErrors (a folder that cannot be written, no file descriptors left) propagate."""
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            holder = read_holder(self.log)
            raise LogLocked(self.log, holder if holder is None or holder.alive else None
                            ) from None
        self.held = True
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
              STARTED: _start_time(os.getpid())}
        # best effort: a full disk must not stop the writer (LogLocked then names nobody)
        with contextlib.suppress(OSError):
            write_private(holder_path(self.log), json.dumps(me).encode())

    def release(self) -> None:
        """Let go of the lock (and remove the sidecar)."""
        if not self.held:
            return
        self.held = False
        with contextlib.suppress(OSError):
            holder_path(self.log).unlink()
        self._lock.release()

    def __del__(self) -> None:
        # an abandoned holder (a session that failed half-way): its sidecar must not go on
        # naming this live process to other kernels
        with contextlib.suppress(Exception):
            self.release()


def held_elsewhere(log: str | os.PathLike[str]) -> Holder | None:
    """Who holds ``log`` open for writing, if another live process does (else None).

    Read from the sidecar, without touching the lock, so asking never makes an opener fail:
    a sidecar left by a process that died (its pid gone, or reused) counts as no holder."""
    h = read_holder(Path(log))
    if h is None or not h.alive:
        return None
    if h.here and h.pid == os.getpid():
        return None
    return h


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (replacing it), readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie holds nothing; one of another user counts)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # gone (its ZombieProcess too)
        return False
    except psutil.AccessDenied:
        return True  # it exists, under another user
    except (psutil.Error, ValueError):  # a pid psutil cannot look at (negative, say)
        return False


def _start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if that cannot be told."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.Error, ValueError):
        return None


start_time = _start_time  # also what a scratch folder records of its owner (agent/scratch.py)

START_SLACK = 5.0
"""How far two readings of one process's start time (seconds since the epoch) may differ.

psutil adds the boot time, ``btime`` of ``/proc/stat``, a whole second that the kernel derives
from the wall clock: when the clock is stepped or slewed between the holder's reading and the
reader's, the two differ by a second or more. SEEN: in CI (a loaded 2-core VM) a live holder
was once judged dead with a 1-second slack, and ``%claude sessions`` in a second kernel showed
its open session as a plain log. A reused pid cannot come this close: it needs the holder dead
and the pid space (32,768 here) gone round within these 5 seconds of the holder's own start."""

STARTED = "started_at"
"""The record's key for the holder's start time, in seconds since the epoch. Versions before
psutil wrote ``started`` in clock ticks since boot, which cannot be told apart from seconds by
its value: that key is not read, so such a holder is judged by its pid alone (alive if it runs),
and a still-running older kernel's lock or scratch folder is never taken for a dead one's."""
