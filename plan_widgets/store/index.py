"""Where session logs live, which sessions they hold, and how an id (or its start) names one."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..model import Event, SessionState, fold
from ..model.errors import OptionError
from .lock import Holder
from .lock import held_elsewhere as _held_elsewhere
from .log import LogError, read_events

LOG_DIR_ENV = "PLAN_WIDGETS_LOG_DIR"


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
    holder: Holder | None = None
    """The other live process that has the log open for writing (None: none)."""
    fresh_from: str | None = None
    """The conversation whose approved plan started this one (Approve, start fresh)."""
    went_on_in: str | None = None
    """The conversation this one's approved plan started."""

    @property
    def where(self) -> str:
        """``log``, or ``open in another kernel (pid N ...)`` while another process holds it."""
        if self.holder is None:
            return "log"
        return f"open in another kernel ({self.holder.describe()})"


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


def resolve_session_id(prefix: str, log_dir: str | os.PathLike[str] | None = None,
                       also: Iterable[str] = ()) -> str | None:
    """The full id of the session ``prefix`` names: among the logs in ``log_dir`` and the
    ids in ``also`` (the sessions of this kernel, which may be logged elsewhere), the one
    whose id it is, or else the one whose id starts with it. None if none; several raise
    :class:`OptionError` naming them (never one of them, silently).

    This is the one resolver of session ids; ``plan_widgets.ipython.registry.resolve`` adds
    the kernel's live sessions to it."""
    if not prefix:
        return None
    found = set(session_ids(prefix, log_dir)) | {sid for sid in also if sid.startswith(prefix)}
    if prefix in found:
        return prefix
    if len(found) > 1:
        raise OptionError(ambiguous(prefix, sorted(found)))
    return found.pop() if found else None


@dataclass(frozen=True)
class SessionLog:
    """One session's log, read once: its events, and what they say (folded on demand)."""

    path: Path
    events: list[Event]

    @property
    def session_id(self) -> str:
        return self.path.stem

    @cached_property
    def state(self) -> SessionState:
        return fold(self.events)

    @property
    def name(self) -> str | None:
        """The name the session last ran under."""
        return self.state.name

    def resume_options(self) -> dict[str, Any]:
        """The options the session was last started with, for resuming it: ``cwd``, ``mode``
        (resting), ``model``, ``plan_model`` and ``scripted`` (those it had; a directory or
        script file that no longer exists is left out)."""
        last = None
        for e in self.events:
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


def read_session_log(path: Path) -> SessionLog:
    """Read one log (raises OSError or :class:`LogError`)."""
    return SessionLog(path, read_events(path))


def resumable_log(session_id: str,
                  log_dir: str | os.PathLike[str] | None = None) -> SessionLog | None:
    """The log of ``session_id`` (or of the one session whose id starts with it), read for
    resuming it; None if there is none. An unreadable log raises :class:`OptionError` (one
    line: the file, the line, what is wrong)."""
    path = find_session_log(session_id, log_dir)
    if path is None:
        return None
    try:
        return read_session_log(path)
    except (OSError, LogError) as e:
        raise OptionError(f"cannot resume {path.stem}: {e}") from None


def resume_options(session_id: str,
                   log_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The options a session was last started with, read from its log, for resuming it
    (see :meth:`SessionLog.resume_options`). Empty if no log; an unreadable log raises
    :class:`OptionError` (one line: the file, the line, what is wrong)."""
    log = resumable_log(session_id, log_dir)
    return log.resume_options() if log is not None else {}


def held_elsewhere(log: str | os.PathLike[str]) -> Holder | None:
    """Whether another live process has the session log ``log`` open for writing: its
    :class:`Holder` (pid, host, since when), else None.

    Read from the lock's sidecar (``<log>.holder``) without touching the lock itself, so
    asking never makes a kernel that opens the log fail. A sidecar left by a process that
    died counts as none, and so does this process (its sessions are listed as its own)."""
    return _held_elsewhere(log)


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
        holder=held_elsewhere(path),
        fresh_from=state.fresh_from,
        went_on_in=state.went_on_in,
    )


def session_logs(log_dir: str | os.PathLike[str] | None = None,
                 unreadable: list[tuple[Path, str]] | None = None) -> Iterator[SessionLog]:
    """The session logs in ``log_dir`` that hold events, each read once, in no set order.

    Unreadable logs are left out (and added to ``unreadable``, with why, if given).
    """
    for p in _session_files(default_log_dir(None, log_dir)):
        try:
            log = read_session_log(p)
        except (OSError, LogError) as e:
            if unreadable is not None:
                unreadable.append((p, str(e)))
            continue
        if log.events:
            yield log


def recency(s: SessionState | SessionSummary) -> tuple[float, float]:
    """Sort key: the most recently active session is the greatest."""
    return (s.updated or 0.0, s.started or 0.0)


def newest(logs: Iterable[SessionLog]) -> SessionLog | None:
    """The most recently active of ``logs`` (the first of equals), or None."""
    return max(logs, key=lambda log: recency(log.state), default=None)


def list_sessions(log_dir: str | os.PathLike[str] | None = None,
                  unreadable: list[tuple[Path, str]] | None = None) -> list[SessionSummary]:
    """Summaries of the session logs in ``log_dir``, most recently active first (each says
    whether another kernel has it open: :attr:`SessionSummary.holder`).

    Unreadable logs are left out (and added to ``unreadable``, with why, if given).
    """
    out = [summarize_state(log.state, log.path) for log in session_logs(log_dir, unreadable)]
    out.sort(key=recency, reverse=True)
    return out
