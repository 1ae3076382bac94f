"""Starting a session from its event log: the log an id names, and the options it gives.

A resumed session continues the conversation the log records: the CLI reconnects with its
own transcript, and the session folds the log back into its state. The log is read once
here (for the options, and the name the session last ran under).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.errors import OptionError
from ..store import SessionLog, default_log_dir, resumable_log
from . import registry

if TYPE_CHECKING:
    from ..agent.session import Session


def start_from_log(name: str | None, given: dict[str, Any], *, log: SessionLog | None = None,
                   default_scripted: str | None = None) -> tuple[Session, bool]:
    """``%claude resume``: start the session ``given["resume"]`` names again, under ``name``
    (default: the name it last ran under), from its log (``log`` if the caller has read it
    already; the log is read once either way). ``default_scripted`` applies if neither
    ``given`` nor the log names a scripted model. Returns the session and True, or the
    session and False if it already runs in this kernel."""
    if log is None:
        log, given = _find_log_to_resume(given)
    options = {**log.resume_options(), **given, "resume": log.session_id}
    for s in registry.sessions().values():
        if s.session_id == log.session_id and not (s.dead or s.closed):
            return s, False
    if default_scripted and not options.get("scripted"):
        options["scripted"] = default_scripted
    return registry.start(name or log.name or "default", options), True


def options_to_resume(given: dict[str, Any]) -> dict[str, Any]:
    """Options for resuming ``given["resume"]`` (an id, or the start of one): the full id,
    and what the session was started with (cwd, resting mode, models, scripted model) as its
    log tells, under the options given here. Unknown ids raise OptionError."""
    log, given = _find_log_to_resume(given)
    return {**log.resume_options(), **given, "resume": log.session_id}


def _find_log_to_resume(given: dict[str, Any]) -> tuple[SessionLog, dict[str, Any]]:
    """The log of the session ``given["resume"]`` names, read once, and ``given`` (with the
    log's folder if it is not where ``cwd`` and ``log_dir`` point)."""
    log_dir = default_log_dir(given.get("cwd"), given.get("log_dir"))
    sid = registry.resolve(str(given["resume"]), log_dir)
    log = resumable_log(sid, log_dir) if sid else None
    if log is None and sid and not (given.get("cwd") or given.get("log_dir")):
        # a session of this kernel (closed, or dead) logged elsewhere (--cwd): its own log
        for s in registry.sessions().values():
            path = s.log_path
            if s.session_id == sid and path and path.is_file():
                log_dir = path.parent
                given = {**given, "log_dir": str(log_dir)}
                log = resumable_log(sid, log_dir)
                break
    if log is None:
        raise OptionError(f"no session {given['resume']!r} in the event logs ({log_dir}); "
                          "%claude sessions lists them")
    return log, given
