"""Reading an event log back: every line one event, a torn last line ignored, lines of a newer
version kept and skipped (one warning), any other bad line a :class:`LogError` naming the line.
Also where a log ends, for the writer: the last seq, and a torn tail cut off before appending.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from pydantic import ValidationError

from ..model.errors import PlanWidgetsError
from ..model.events import EVENT_ADAPTER, EVENT_TYPES, EVENTS_ADAPTER, Event, gc_paused

logger = logging.getLogger("plan_widgets")


class LogError(PlanWidgetsError, ValueError):
    """An event log line that cannot be read (not a torn last line): ``"<path>:<line>: ..."``."""


def read_events(path: str | os.PathLike[str]) -> list[Event]:
    """All events of a log file, oldest first.

    A torn last line (no newline, left by a crash) is ignored; lines of unknown event types
    (from a newer version) are skipped, and unknown fields kept in ``model_extra``: both are
    reported by one warning line on the logger ``"plan_widgets"``; any other unreadable line
    raises :class:`LogError` (``"<path>:<line>: ..."``).
    """
    data = Path(path).read_bytes()
    unknown: list[str] = []
    events = _read(path, data, unknown)
    _warn_newer(path, events, unknown)
    return events


_warned: set[tuple[str, int, tuple[str, ...]]] = set()


def _warn_newer(path: str | os.PathLike[str], events: list[Event], unknown: list[str]) -> None:
    """One warning line for the parts of a log this version does not know (said again only
    when what is unknown changes)."""
    fields = sorted({k for e in events if e.model_extra for k in e.model_extra})
    if not unknown and not fields:
        return
    key = (str(path), len(unknown), tuple(fields))
    if key in _warned:
        return
    _warned.add(key)
    what = []
    if unknown:
        types = sorted(set(unknown))
        what.append(f"{len(unknown)} event(s) of unknown type ({', '.join(types[:5])}"
                    + (", ..." if len(types) > 5 else "") + ")")
    if fields:
        what.append(f"unknown field(s) {', '.join(fields[:5])}" + (", ..." if len(fields) > 5
                                                                   else ""))
    logger.warning("plan_widgets: %s: %s, from a newer version or edited by hand: kept in the "
                   "log, skipped here", path, " and ".join(what))


def _read(path: str | os.PathLike[str], data: bytes, unknown: list[str]) -> list[Event]:
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
            return _read_lines(path, data, unknown)
    if torn.strip():
        try:
            events.append(EVENT_ADAPTER.validate_json(torn))
        except ValueError:
            pass
    return events


def _read_lines(path: str | os.PathLike[str], data: bytes, unknown: list[str]) -> list[Event]:
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
            unknown.append(obj["type"])
            continue  # an event from a newer version
        raise LogError(f"{path}:{i + 1}: malformed event line: {_short(error)}")
    return events


def _short(error: Exception) -> str:
    if isinstance(error, ValidationError):
        problems = error.errors()
        if problems:
            first = problems[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            msg = f"{loc}: {first.get('msg')}" if loc else str(first.get("msg"))
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
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


def last_seq(path: Path) -> int:
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


def cut_torn_tail(path: Path) -> None:
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


