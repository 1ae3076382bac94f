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
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from ._events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    EVENTS_ADAPTER,
    Event,
    SessionState,
    dump_event,
    fold,
    gc_paused,
)
from ._options import OptionError

LOG_DIR_ENV = "PLAN_WIDGETS_LOG_DIR"
REDACTED = "[redacted]"


class LogError(ValueError):
    """An event log line that cannot be read (not a torn last line)."""


def default_log_dir(cwd: str | os.PathLike[str] | None = None,
                    log_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where session logs live: ``log_dir``, else $PLAN_WIDGETS_LOG_DIR, else
    ``<cwd>/.plan_widgets/sessions`` (cwd defaults to the current directory)."""
    if log_dir:
        return Path(log_dir).expanduser()
    env = os.environ.get(LOG_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(cwd if cwd else os.getcwd()) / ".plan_widgets" / "sessions"


# -- redaction -----------------------------------------------------------------------------

_SECRET_VALUE = re.compile(
    r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{8,}"
    r"|(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}"
    r"|\b[Bb]earer\s+(?=[A-Za-z0-9._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{12,}=*"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)
_SECRET_ASSIGN = re.compile(
    # NAME=value, NAME = "value", NAME: value, "NAME": "value" (the bare API_KEY / TOKEN too)
    # (a name ending in TOKENS, such as MAX_TOKENS, counts tokens: it is no secret)
    # The name is a whole word of [A-Z0-9_] holding a keyword followed by "_" or its end:
    # checked by a lookahead, then taken in one greedy run. (Spelled as one backtracking
    # pattern, a word such as "TOKEN_" * n tried every keyword in it against every tail:
    # quadratic, and minutes of a frozen kernel for a 240 KB tool input.)
    r"\b(?=[A-Z0-9_]*?(?:API_?KEYS?|TOKEN|SECRETS?|PASSWORDS?|PASSWD)(?:_|\b))"
    r"([A-Z0-9_]+)\b"
    r"([\"']?[ \t]*[=:][ \t]*)"
    r"(\"[^\"]*\"|'[^']*'|[^\s\"']+)"
)
_SECRET_HEADER = re.compile(
    # Authorization: Bearer <anything>, x-api-key: <key> (a scheme, or a longish credential,
    # so that code such as {"Authorization": f"Bearer {token}"} is left alone)
    r"(?i:\b((?:proxy-)?authorization|x-api-key)([\"']?[ \t]*[:=][ \t]*[\"']?))"
    r"(?:((?i:bearer|basic|token|digest)[ \t]+)(?![{$<])([^\s\"'<>,;]+)"
    r"|(?![{$<])([^\s\"'<>,;]{8,}))"
)
_SECRET_KEY = re.compile(
    r"api[_\-]?key|authorization|password|passwd|secret|credential|cookie"
    r"|private[_\-]?key|access[_\-]?key"
    r"|(?:^|[_\-.])(?:access|refresh|auth|id|session|bearer)?[_\-]?token(?:$|[_\-.])",
    re.IGNORECASE,
)
# cheap screen over the serialized line: only lines that match get the full walk
_SUSPECT = re.compile(
    _SECRET_VALUE.pattern + "|" + _SECRET_ASSIGN.pattern + "|" + _SECRET_HEADER.pattern
    + r"|(?i:api[_\-]?key|authoriz|passw|secret|credential|cookie|private|access|token)"
)


def sensitive_key(key: str) -> bool:
    """Whether a dict key names a secret (api_key, token, authorization, password, ...)."""
    return bool(_SECRET_KEY.search(key))


def redact_text(text: str) -> str:
    """``text`` with anything that looks like an API key or token replaced by [redacted]."""
    text = _SECRET_HEADER.sub(
        lambda m: m.group(1) + m.group(2) + (m.group(3) or "") + REDACTED, text
    )
    text = _SECRET_VALUE.sub(REDACTED, text)
    return _SECRET_ASSIGN.sub(_assigned, text)


def _assigned(m: re.Match[str]) -> str:
    value = m.group(3)
    quote = value[0] if value[0] in "\"'" else ""
    return m.group(1) + m.group(2) + quote + REDACTED + quote


def redact(value: Any) -> Any:
    """A copy of ``value`` (JSON-like data) with secrets redacted; ``value`` if none."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for k, v in value.items():
            if isinstance(v, str) and v and isinstance(k, str) and sensitive_key(k):
                new: Any = REDACTED
            else:
                new = redact(v)
            if new is not v and new != v:
                if out is None:
                    out = dict(value)
                out[k] = new
        return value if out is None else out
    if isinstance(value, (list, tuple)):
        items = [redact(v) for v in value]
        if any(a is not b and a != b for a, b in zip(items, value, strict=True)):
            return items
        return value
    return value


def redact_event(event: Event) -> Event:
    """``event`` with secrets redacted (the same object if it holds none)."""
    if not _SUSPECT.search(dump_event(event)):
        return event
    data = event.model_dump()
    clean = redact(data)
    if clean is data:
        return event
    return type(event).model_validate(clean)  # type: ignore[return-value]


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


# -- finding sessions ----------------------------------------------------------------------


@dataclass(frozen=True)
class SessionSummary:
    """One session log, summarized."""

    session_id: str
    name: str | None
    started: float | None
    updated: float | None
    turns: int
    cost_usd: float
    last_mode: str | None
    pending: int
    path: Path


def _session_files(log_dir: Path) -> list[Path]:
    try:
        entries = list(log_dir.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    # <session_id>.jsonl only: sibling files such as <id>.requests.jsonl are not logs
    return [p for p in entries if p.suffix == ".jsonl" and "." not in p.stem and p.is_file()]


def session_ids(prefix: str, log_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The ids of the session logs that ``prefix`` names, sorted: the one whose id it is, or
    else every one whose id starts with it (several: the prefix is ambiguous)."""
    d = default_log_dir(None, log_dir)
    # an id is a file name, never a path (../x) or a sibling file (<id>.requests)
    if not prefix or any(c in prefix for c in "/\\.") or os.sep in prefix:
        return []
    if (d / f"{prefix}.jsonl").is_file():
        return [prefix]
    return sorted(p.stem for p in _session_files(d) if p.stem.startswith(prefix))


def ambiguous(prefix: str, ids: list[str], limit: int = 6) -> str:
    """The one-line error for a ``prefix`` that several session ``ids`` start with."""
    shown = ", ".join(ids[:limit]) + (", ..." if len(ids) > limit else "")
    return f"{prefix!r} matches {len(ids)} sessions: {shown} (give more of the id)"


def find_session_log(session_id: str,
                     log_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The log file of ``session_id`` (or of the one session whose id starts with it)."""
    found = session_ids(session_id, log_dir)
    return default_log_dir(None, log_dir) / f"{found[0]}.jsonl" if len(found) == 1 else None


def resolve_session_id(session_id: str,
                       log_dir: str | os.PathLike[str] | None = None) -> str | None:
    """The full id of the session whose log is ``session_id`` (or starts with it), or None.

    A prefix of several ids raises :class:`OptionError` naming them."""
    found = session_ids(session_id, log_dir)
    if len(found) > 1:
        raise OptionError(ambiguous(session_id, found))
    return found[0] if found else None


def resume_options(session_id: str,
                   log_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The options a session was last started with, read from its log, for resuming it:
    ``cwd``, ``mode`` (resting), ``model``, ``plan_model`` and ``scripted`` (those it had;
    a directory or script file that no longer exists is left out). Empty if no log; an
    unreadable log raises :class:`OptionError` (one line: the file, the line, what is wrong)."""
    path = find_session_log(session_id, log_dir)
    if path is None:
        return {}
    try:
        events = read_events(path)
    except (OSError, LogError) as e:
        raise OptionError(f"cannot resume {path.stem}: {e}") from None
    last = None
    for e in events:
        if e.type == "session:started":
            last = e
    if last is None:
        return {}
    out: dict[str, Any] = {"mode": last.resting_mode}
    if last.cwd and Path(last.cwd).is_dir():
        out["cwd"] = last.cwd
    if last.model:
        out["model"] = last.model
    if last.plan_model:
        out["plan_model"] = last.plan_model
    if last.scripted and Path(last.scripted).is_file():
        out["scripted"] = last.scripted
    return out


def summarize_state(state: SessionState, path: Path) -> SessionSummary:
    """A :class:`SessionSummary` of a folded log."""
    return SessionSummary(
        session_id=state.session_id or path.stem,
        name=state.name,
        started=state.started,
        updated=state.updated,
        turns=state.turns,
        cost_usd=state.cost_usd,
        last_mode=state.mode,
        pending=len(state.pending_ids),
        path=path,
    )


def list_sessions(log_dir: str | os.PathLike[str] | None = None,
                  unreadable: list[tuple[Path, str]] | None = None) -> list[SessionSummary]:
    """Summaries of the session logs in ``log_dir``, most recently active first.

    Unreadable logs are left out (and added to ``unreadable``, with why, if given).
    """
    out = []
    for p in _session_files(default_log_dir(None, log_dir)):
        try:
            events = read_events(p)
        except (OSError, LogError) as e:
            if unreadable is not None:
                unreadable.append((p, str(e)))
            continue
        if events:
            out.append(summarize_state(fold(events), p))
    out.sort(key=lambda s: (s.updated or 0.0, s.started or 0.0), reverse=True)
    return out
