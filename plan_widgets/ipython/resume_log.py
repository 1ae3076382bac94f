"""A session's event log to resume from: the log an id names, and the options it gives
(``obtain.start_from_log`` starts the session).

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
    pass


def options_to_resume(given: dict[str, Any]) -> dict[str, Any]:
    """Options for resuming ``given["resume"]`` (an id, or the start of one): the full id,
    and what the session was started with (cwd, resting mode, models, scripted model) as its
    log tells, under the options given here. Unknown ids raise OptionError."""
    log, given = find_log_to_resume(given)
    return {**log.resume_options(), **given, "resume": log.session_id}


def find_log_to_resume(given: dict[str, Any]) -> tuple[SessionLog, dict[str, Any]]:
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
