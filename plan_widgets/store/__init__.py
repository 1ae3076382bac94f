"""The store: each session's events in an append-only JSONL log, secrets redacted.

``log`` writes and reads one log, ``redact`` keeps secrets out of it, ``index`` finds the
logs of a folder and the session an id names.
"""

from .index import (
    LOG_DIR_ENV,
    SessionSummary,
    ambiguous,
    default_log_dir,
    find_session_log,
    list_sessions,
    resolve_session_id,
    resume_options,
    session_ids,
    summarize_state,
)
from .log import EventLog, LogError, read_events
from .redact import REDACTED, redact, redact_event, redact_text, sensitive_key

__all__ = [
    "LOG_DIR_ENV",
    "REDACTED",
    "EventLog",
    "LogError",
    "SessionSummary",
    "ambiguous",
    "default_log_dir",
    "find_session_log",
    "list_sessions",
    "read_events",
    "redact",
    "redact_event",
    "redact_text",
    "resolve_session_id",
    "resume_options",
    "sensitive_key",
    "session_ids",
    "summarize_state",
]
