"""The store: each session's events in an append-only JSONL log, secrets redacted.

``log`` writes and reads one log, ``lock`` keeps it to one writer, ``redact`` keeps secrets
out of it, ``index`` finds the logs of a folder, the session an id names, and whether another
kernel has a log open.
"""

from .index import (
    LOG_DIR_ENV,
    SessionLog,
    SessionSummary,
    ambiguous,
    default_log_dir,
    find_session_log,
    held_elsewhere,
    list_sessions,
    newest,
    read_session_log,
    recency,
    resolve_session_id,
    resumable_log,
    resume_options,
    session_ids,
    session_logs,
    summarize_state,
)
from .lock import Holder, LogLocked, LogUnavailable
from .log import EventLog, LogError, LogIncomplete, prepare_log_dir, read_events
from .redact import REDACTED, redact, redact_event, redact_text, sensitive_key

__all__ = [
    "LOG_DIR_ENV",
    "REDACTED",
    "EventLog",
    "Holder",
    "LogError",
    "SessionLog",
    "LogIncomplete",
    "LogLocked",
    "LogUnavailable",
    "SessionSummary",
    "ambiguous",
    "default_log_dir",
    "find_session_log",
    "held_elsewhere",
    "list_sessions",
    "newest",
    "prepare_log_dir",
    "read_events",
    "read_session_log",
    "recency",
    "redact",
    "redact_event",
    "redact_text",
    "resolve_session_id",
    "resumable_log",
    "resume_options",
    "sensitive_key",
    "session_ids",
    "session_logs",
    "summarize_state",
]
