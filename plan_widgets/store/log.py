"""The event log: one JSONL file per session, ``<log dir>/<session_id>.jsonl``.

Where: the ``log_dir`` option (``plan_widgets.session(log_dir=...)``, ``%config
ClaudeMagics.log_dir = "..."``), else the ``PLAN_WIDGETS_LOG_DIR`` environment variable, else
``<session cwd>/.plan_widgets/sessions`` (see :func:`default_log_dir`). A scripted model's
request log sits next to it (``<session_id>.requests.jsonl``; not an event log).

Lines are appended and flushed one event at a time. A crash can leave a torn last line; it is
ignored on reading and cut off before the next append. Secrets (API keys, tokens, passwords)
are redacted before writing: they never reach the file.
"""


from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from ..model.errors import PlanWidgetsError
from ..model.events import EVENT_ADAPTER, EVENT_TYPES, EVENTS_ADAPTER, Event, dump_event, gc_paused
from .redact import redact_event


class LogError(PlanWidgetsError, ValueError):
    """An event log line that cannot be read (not a torn last line)."""


# -- reading -------------------------------------------------------------------------------


def read_events(path: str | os.PathLike[str]) -> list[Event]:
    """All events of a log file, oldest first.

    A torn last line (no newline, left by a crash) is ignored; lines of unknown event types
    (from a newer version) are skipped; any other unreadable line raises :class:`LogError`.
    """
    data = Path(path).read_bytes()
    body, _, torn = data.rpartition(b"\n")  # torn is b"" when the file ends with a newline
    events: list[Event] | None
    try:  # fast path: the whole file in one validation
        with gc_paused():
            events = EVENTS_ADAPTER.validate_json(b"[" + body.replace(b"\n", b",") + b"]")
    except ValueError:  # blank, unknown or bad lines: go line by line
        events = None
    # joined with commas, two halves of a broken line can read as one event (or one line as
    # two): only one event per line is a clean log
    if events is None or len(events) != (body.count(b"\n") + 1 if body else 0):
        with gc_paused():
            return _read_lines(path, data)
    if torn.strip():
        try:
            events.append(EVENT_ADAPTER.validate_json(torn))
        except ValueError:
            pass
    return events


def _read_lines(path: str | os.PathLike[str], data: bytes) -> list[Event]:
    lines = data.split(b"\n")
    last = len(lines) - 1  # index of the piece after the final newline (b"" if none)
    events: list[Event] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            events.append(EVENT_ADAPTER.validate_json(line))
            continue
        except ValidationError as e:
            error: Exception = e
        if i == last:
            break  # a torn last line: the write never finished
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("type"), str) and (
            obj["type"] not in EVENT_TYPES
        ):
            continue  # an event from a newer version
        raise LogError(f"{path}:{i + 1}: malformed event line: {_short(error)}")
    return events


def _short(error: Exception) -> str:
    if isinstance(error, ValidationError):
        errs = error.errors()
        if errs:
            first = errs[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            msg = f"{loc}: {first.get('msg')}" if loc else str(first.get("msg"))
            more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
            return (msg + more).replace("\n", " ")[:200]
    return str(error).replace("\n", " ")[:200]


def _complete_line(line: bytes) -> bool:
    """Whether an unterminated last line is a whole event (the reader keeps it) or a whole
    event of a newer version (the reader skips it), rather than a torn write."""
    try:
        EVENT_ADAPTER.validate_json(line)
        return True
    except ValueError:
        pass
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and isinstance(obj.get("type"), str) and (
        obj["type"] not in EVENT_TYPES
    )


def _last_seq(path: Path) -> int:
    """The seq of the last complete line of an existing log (0 if none)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    chunk = 1 << 16
    with open(path, "rb") as fh:
        while True:
            start = max(0, size - chunk)
            fh.seek(start)
            tail = fh.read(size - start)
            lines = tail.split(b"\n")
            last = lines.pop()  # torn, empty, or a whole line that lost its newline
            if last.strip() and (start == 0 or lines) and _complete_line(last):
                lines.append(last)
            if start > 0:
                lines = lines[1:]  # possibly cut at the front
            for line in reversed(lines):
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("seq"), int):
                    return int(obj["seq"])
            if start == 0:
                return 0
            chunk *= 4


def _cut_torn_tail(path: Path) -> None:
    """Drop a partial last line so the next append starts on a line of its own (a whole
    event that only lacks its newline gets one instead)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        pos = size
        keep = 0
        while pos > 0:
            start = max(0, pos - (1 << 16))
            fh.seek(start)
            block = fh.read(pos - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        fh.seek(keep)
        if _complete_line(fh.read(size - keep)):
            fh.seek(size)
            fh.write(b"\n")
        else:
            fh.truncate(keep)


# -- writing -------------------------------------------------------------------------------


class EventLog:
    """An append-only event log file. ``seq`` is the last seq written (or found)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.seq: int = _last_seq(self.path)
        self._fh: IO[bytes] | None = None
        self._lock = threading.Lock()

    def append(self, event: Event) -> Event:
        """Redact, number (seq = previous + 1), write and flush ``event``; return what was
        written."""
        with self._lock:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                _cut_torn_tail(self.path)
                # unbuffered: each line goes to the OS as it is written
                self._fh = open(self.path, "ab", buffering=0)
            event = redact_event(event).model_copy(update={"seq": self.seq + 1})
            data = memoryview(dump_event(event).encode() + b"\n")
            try:
                while data:
                    n = self._fh.write(data)
                    if not n:
                        raise OSError(f"{self.path}: nothing written")
                    data = data[n:]
            except OSError:
                # (a full disk, say) reopen on the next append, which cuts the partial line,
                # so the log never gets a broken line in its middle; seq is not used up
                fh, self._fh = self._fh, None
                try:
                    fh.close()
                except OSError:
                    pass
                raise
            self.seq = event.seq
            return event

    def events(self) -> list[Event]:
        """Every event in the file so far."""
        with self._lock:
            if self._fh is not None:
                self._fh.flush()
        if not self.path.exists():
            return []
        return read_events(self.path)

    def close(self) -> None:
        """Close the file (appending again reopens it)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<EventLog {self.path} seq={self.seq}>"


