"""``%claude resume [ID]``: continue a session after a restart, and show what it did before.

The CLI reconnects with its own transcript; the markers, plans and cost come back from the
event log, read once here (for the options and the name the session last ran under) and
once by the session as it folds it back into its state. A decision that was still pending
shows as expired: its callback died with the old kernel.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..model.errors import OptionError
from ..render.history import history_html, history_lines
from ..store import SessionLog, newest, session_logs
from . import registry as _registry
from .history import log_dir, unreadable
from .obtain import start_from_log
from .output import in_kernel, show


def resume_command(args: argparse.Namespace) -> None:
    """Resume session ``args.id`` (default: the newest in the logs that does not run here)."""
    config = args.config
    given = {k: v for k, v in {
        "log_dir": getattr(config, "log_dir", None),
        "approval_timeout": getattr(config, "approval_timeout", None),
        "scripted": args.scripted,
    }.items() if v is not None}
    log = None
    if args.id:
        given["resume"] = args.id
    else:
        log = _newest_resumable(log_dir(config))
        given["resume"] = log.session_id
    s, started = start_from_log(args.name, given, log=log,
                                default_scripted=getattr(config, "scripted", None))
    if not started:
        print(f"session {s.session_id} is running in this kernel as {s.name!r}")
        show(_registry.control_bar(s))
        return
    show_resumed(s)


def _newest_resumable(where: Path) -> SessionLog:
    """The most recently active log of a session that does not run in this kernel."""
    running = {s.session_id for s in _registry.sessions().values() if not (s.dead or s.closed)}
    bad: list[tuple[Path, str]] = []
    readable = 0

    def candidates() -> Any:
        nonlocal readable
        for log in session_logs(where, bad):
            readable += 1
            if log.session_id not in running:
                yield log

    found = newest(candidates())
    if found is None:
        if bad:
            raise OptionError(f"no session to resume in {where}: {unreadable(bad)}")
        if readable:
            raise OptionError("no other session to resume: every session in the logs "
                              f"({where}) runs in this kernel")
        raise OptionError(f"no session to resume: no event logs in {where}")
    return found


def show_resumed(s: Any) -> None:
    """Display a resumed session: a note, its control bar, and its history from the log."""
    st = s.state
    expired = [d for d in st.decisions.values() if d.status == "expired" and d.by == "restart"]
    note = (f"Resumed session {s.session_id} as {s.name!r}: {st.turns} turns so far, "
            f"${st.cost_usd:.4f}; mode {st.mode or '?'}, model {st.model or '?'}. "
            "The CLI reconnects with its own transcript.")
    if expired:
        note += (f" {len(expired)} decision(s) left pending by the old kernel expired; they can "
                 "no longer be answered.")
    print(note)
    lines = history_lines(s.events, st)
    if in_kernel():
        from IPython.display import display

        # the session's live control bar, then its history: static (nothing in it can be
        # answered), the same in a saved notebook as on the page
        _registry.control_bar(s).show()
        display({"text/markdown": history_html(s.events, st), "text/plain": "\n".join(lines)},
                raw=True)
    else:
        for line in lines:
            print(line)
