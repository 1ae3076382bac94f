"""The event log: one JSONL file per session, ``<log dir>/<session_id>.jsonl``.

Where: the ``log_dir`` option (``plan_widgets.session(log_dir=...)``, ``%config
ClaudeMagics.log_dir = "..."``), else the ``PLAN_WIDGETS_LOG_DIR`` environment variable, else
``<session cwd>/.plan_widgets/sessions`` (see :func:`default_log_dir`). A scripted model's
request log sits next to it (``<session_id>.requests.jsonl``; not an event log).

Lines are appended and flushed one event at a time. A crash can leave a torn last line; it is
ignored on reading and cut off before the next append. Secrets (API keys, tokens, passwords)
are redacted before writing: they never reach the file.

One writer per log: opening it for writing takes a lock across processes (see
:mod:`plan_widgets.store.lock`); a second writer gets :class:`LogLocked`, one line naming the
holder.

Logs stay private: log files, their locks and sidecars are created readable by their owner only
(0600), new folders 0700, and the default folder's parent, ``<cwd>/.plan_widgets``, gets a
``.gitignore`` holding ``*`` (as ``.pytest_cache`` does), so ``git add -A`` leaves the logs out.

A log edited by hand, or written by a newer version: lines of unknown event types and unknown
fields of known events are kept (in the file, and in the events read: ``model_extra``, written
back as they were), skipped by the fold, and reported by ONE warning line on the logger
``"plan_widgets"`` per log and reading (repeated readings of an unchanged log say it once). A
line that is JSON of the wrong shape raises :class:`LogError` ``"<path>:<line>: ..."``.

A full disk (any failed write): events are never lost silently. The first event that cannot be
written, number N, sets :attr:`EventLog.broken_at` = N and :attr:`EventLog.broken` = the
OSError; it and every later event are numbered and kept in memory
(:attr:`EventLog.unwritten`), and each :meth:`EventLog.append` raises :class:`LogIncomplete`
("the event log ... is incomplete from event N: ...") until a later append (or
:meth:`EventLog.close`) writes them all, in order, once there is room: the log is then whole
again and ``broken_at`` is None. The file never holds a broken line nor a gap: it is always the
events 1..N-1, then (once written) N, N+1, ... The session's policy: it goes on meanwhile and
says that its log is incomplete from event N (``str`` of the :class:`LogIncomplete`).
"""


from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
from pathlib import Path
from typing import IO

from ..model.errors import PlanWidgetsError
from ..model.events import Event, dump_event
from .lock import FILE_MODE, LogLock, LogLocked, LogUnavailable
from .read import LogError, cut_torn_tail, last_seq, read_events
from .redact import redact_event

logger = logging.getLogger("plan_widgets")

DIR_MODE = 0o700
GITIGNORE = "# Created by plan_widgets: session logs hold prompts, plans and diffs.\n*\n"
LOG_DIR_HOW = ("set log_dir to a folder you can write (%config ClaudeMagics.log_dir = \"...\", "
               "or $PLAN_WIDGETS_LOG_DIR)")

__all__ = ["EventLog", "LogError", "LogIncomplete", "LogLocked", "LogUnavailable",
           "prepare_log_dir", "read_events"]


class LogIncomplete(PlanWidgetsError, OSError):
    """An event could not be written (a full disk, say): the log is incomplete from event
    ``at`` on. The events are kept in memory and written once there is room."""

    def __init__(self, path: Path, at: int, cause: OSError) -> None:
        self.path = path
        self.at = at
        self.cause = cause
        why = cause.strerror or str(cause) or type(cause).__name__
        super().__init__(f"the event log {path} is incomplete from event {at}: {why} (the "
                         "events from there on are kept in memory and written once it can be)")


def _why(e: OSError) -> str:
    return (e.strerror or str(e) or type(e).__name__).lower()


def prepare_log_dir(folder: str | os.PathLike[str]) -> Path:
    """Create the log folder (and its parents) if needed; return it.

    New folders are made 0700. The default folder, ``<cwd>/.plan_widgets/sessions``, gets
    ``<cwd>/.plan_widgets/.gitignore`` holding ``*`` (an existing one is left as it is).
    A folder that cannot be made raises :class:`LogUnavailable`, one line with the cause and
    the setting to change."""
    d = Path(folder)
    try:
        if d.name == "sessions" and d.parent.name == ".plan_widgets":
            d.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            ignore = d.parent / ".gitignore"
            if not ignore.exists():
                with contextlib.suppress(FileExistsError):
                    fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                    with os.fdopen(fd, "w", encoding="utf-8") as fh:
                        fh.write(GITIGNORE)
        d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except OSError as e:
        raise LogUnavailable(f"cannot create the session log folder {d}: {_dir_problem(d, e)}; "
                             + LOG_DIR_HOW) from None
    if not d.is_dir():
        raise LogUnavailable(f"the session log folder {d} is not a folder; " + LOG_DIR_HOW)
    return d


def _dir_problem(d: Path, e: OSError) -> str:
    if e.errno in (errno.ENOTDIR, errno.EEXIST):
        # the first path component that exists and is not a folder
        for p in [*reversed(d.parents), d]:
            if p.exists() and not p.is_dir():
                return f"{p} is not a folder"
    return _why(e)


def _open_problem(path: Path, e: OSError) -> LogUnavailable:
    if e.errno in (errno.EMFILE, errno.ENFILE):
        return LogUnavailable(
            f"cannot open the session log {path}: no file descriptor left ({_why(e)}); close "
            "some sessions or files, or raise the limit (ulimit -n) and restart the kernel")
    if e.errno == errno.ENOSPC:
        return LogUnavailable(f"cannot open the session log {path}: no space left on the "
                              "device; free some, or " + LOG_DIR_HOW)
    return LogUnavailable(f"cannot open the session log {path}: {_why(e)}; " + LOG_DIR_HOW)


# -- writing -------------------------------------------------------------------------------


class EventLog:
    """An append-only event log file, open for writing: ``seq`` is the last seq given out.

    Making one opens the log for writing: its folder is created (:func:`prepare_log_dir`) and
    its lock taken, or :class:`LogUnavailable` / :class:`LogLocked` says why not, in one line.
    :meth:`close` lets go of the lock; appending after that takes it again for that one event.

    A failed write (a full disk) never loses an event silently: see the module's docstring,
    :attr:`broken_at`, :attr:`broken`, :attr:`unwritten` and :class:`LogIncomplete`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.broken_at: int | None = None
        """The seq of the first event that could not be written (None: the log is whole)."""
        self.broken: OSError | None = None
        """Why that event could not be written."""
        self._unwritten: list[tuple[Event, bytes]] = []
        self._fh: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._file_lock = LogLock(self.path)
        prepare_log_dir(self.path.parent)
        self._take()
        try:
            self.seq: int = last_seq(self.path)
        except OSError as e:
            self._file_lock.release()
            raise _open_problem(self.path, e) from None

    def _take(self) -> None:
        try:
            self._file_lock.acquire()
        except OSError as e:
            raise _open_problem(self.path, e) from None

    @property
    def unwritten(self) -> list[Event]:
        """The events numbered but not yet in the file (from :attr:`broken_at` on)."""
        return [e for e, _ in self._unwritten]

    @property
    def held(self) -> bool:
        """Whether this object holds the log's write lock (it is open for writing)."""
        return self._file_lock.held

    def append(self, event: Event) -> Event:
        """Redact, number (seq = previous + 1), write and flush ``event``; return what was
        written.

        If it cannot be written, it is kept and :class:`LogIncomplete` is raised (an OSError);
        a log closed meanwhile and opened by another writer raises :class:`LogLocked`.
        """
        with self._lock:
            again = not self._file_lock.held
            if again:  # closed: hold the lock for this event only
                self._take()
            try:
                event = redact_event(event).model_copy(update={"seq": self.seq + 1})
                line = dump_event(event).encode() + b"\n"  # (a ValueError uses up nothing)
                self.seq = event.seq
                self._unwritten.append((event, line))
                self._flush()
                return event
            finally:
                if again:
                    self._close_file()
                    self._file_lock.release()

    def _flush(self) -> None:
        """Write the events kept so far, in order; LogIncomplete if one cannot be."""
        while self._unwritten:
            event, line = self._unwritten[0]
            try:
                self._write(line)
            except OSError as e:
                if self.broken_at is None:
                    self.broken_at, self.broken = event.seq, e
                raise LogIncomplete(self.path, self.broken_at, self.broken or e) from e
            self._unwritten.pop(0)
        self.broken_at = self.broken = None

    def _write(self, line: bytes) -> None:
        if self._fh is None:
            cut_torn_tail(self.path)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
            try:
                if os.fstat(fd).st_mode & 0o077:  # a log from before: make it private
                    os.fchmod(fd, stat.S_IMODE(os.fstat(fd).st_mode) & ~0o077)
                # unbuffered: each line goes to the OS as it is written
                self._fh = os.fdopen(fd, "ab", buffering=0)
            except BaseException:
                os.close(fd)
                raise
        data = memoryview(line)
        start = os.fstat(self._fh.fileno()).st_size  # (one writer: appends land there)
        try:
            while data:
                n = self._fh.write(data)
                if not n:
                    raise OSError(errno.EIO, f"{self.path}: nothing written")
                data = data[n:]
        except OSError:
            # the partial line goes at once (truncating needs no room); failing that, the
            # next write reopens the file, which cuts it: never a broken line in the middle
            with contextlib.suppress(OSError):
                os.ftruncate(self._fh.fileno(), start)
            self._close_file()
            raise

    def _close_file(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.close()

    def events(self) -> list[Event]:
        """Every event in the file so far (not those still :attr:`unwritten`)."""
        if not self.path.exists():
            return []
        return read_events(self.path)

    def close(self) -> None:
        """Write what is still kept if there is room now, close the file, let go of the lock
        (appending again takes it again, for that event)."""
        with self._lock:
            if self._unwritten and self._file_lock.held:
                with contextlib.suppress(OSError):
                    self._flush()
            self._close_file()
            self._file_lock.release()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        broken = f" incomplete from {self.broken_at}" if self.broken_at is not None else ""
        return f"<EventLog {self.path} seq={self.seq}{broken}>"
