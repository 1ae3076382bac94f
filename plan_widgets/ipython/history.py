"""``%claude sessions | log | cost | plans``: what the event logs (or the live sessions of this
kernel, whose events are the same) say about sessions.

:func:`plan_widgets.model.state` gives a session's state; tables hold escaped text only, and
model-written text such as plans goes through the safe Markdown path.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..agent.mode_names import mode_title
from ..model.errors import OptionError
from ..render.history import event_summary, when
from ..store import (
    SessionLog,
    default_log_dir,
    list_sessions,
    newest,
    read_session_log,
    session_logs,
)
from . import registry as _registry
from .output import show_markdown, show_table
from .usage import one_line

MAX_LOG_ROWS = 500
"""``%claude log`` shows at most this many events (the newest)."""


def log_dir(config: Any) -> Path:
    """Where this kernel's logs are (``%config ClaudeMagics.log_dir`` and its fallbacks)."""
    return Path(default_log_dir(None, getattr(config, "log_dir", None))).absolute()


def unreadable(bad: list[tuple[Path, str]]) -> str:
    """One line about the logs that cannot be read (and why the first cannot)."""
    return (f"{len(bad)} event log(s) cannot be read and are left out: "
            + ", ".join(p.name for p, _ in bad[:6]) + (", ..." if len(bad) > 6 else "")
            + f" ({one_line(bad[0][1])})")


# -- sessions --------------------------------------------------------------------------------


def _named(name: str | None, fresh_from: str | None, went_on_in: str | None) -> str:
    """A session's name, with the conversation a plan approved to start fresh came from or
    went on in (each a resumable session id of its own)."""
    links = ([f"started fresh from {fresh_from[:8]}"] if fresh_from else []) + (
        [f"went on in {went_on_in[:8]}"] if went_on_in else [])
    return f"{name or '?'} ({'; '.join(links)})" if links else name or "?"


def sessions(args: argparse.Namespace) -> None:
    """``%claude sessions`` (or ``history``): this kernel's sessions, then those only in the
    logs."""
    where = log_dir(args.config)
    rows = []
    seen = set()
    bad: list[tuple[Path, str]] = []
    logged = {info.session_id: info for info in list_sessions(where, bad)}
    for s in _registry.sessions().values():
        seen.add(s.session_id)
        st = s.state
        # the links come from the log it writes now (a live session that started fresh
        # keeps the planning conversation's state: its turns and cost go on)
        own = logged.get(s.session_id)
        rows.append([s.session_id, _named(s.name, own.fresh_from if own else None,
                                          own.went_on_in if own else None),
                     when(st.started), st.turns, f"${st.cost_usd:.4f}",
                     mode_title(st.mode), len(st.pending_ids), "this kernel: " + s.status])
    for info in logged.values():
        if info.session_id in seen:
            continue
        rows.append([info.session_id, _named(info.name, info.fresh_from, info.went_on_in),
                     when(info.started), info.turns,
                     f"${info.cost_usd:.4f}", mode_title(info.last_mode),
                     # its callbacks died with the kernel that asked: resume expires them
                     f"{info.pending} unanswered" if info.pending else 0, info.where])
    if not rows and not bad:
        print(f"no sessions yet (no event logs in {where})")
        return
    if rows:
        show_table(["id", "name", "started", "turns", "cost", "last mode", "pending", "where"],
                   rows, f"event logs in {where}")
    if bad:
        print(unreadable(bad))


# -- log, cost, plans ------------------------------------------------------------------------


def log(args: argparse.Namespace) -> None:
    """``%claude log [ID]``: the events as a table (the newest :data:`MAX_LOG_ROWS`)."""
    sid, events, _ = source(args.config, args.name, args.id)
    if not events:
        print("no events yet")
        return
    shown = events[-MAX_LOG_ROWS:]
    rows = [[e.seq, when(e.ts, "%H:%M:%S"), e.type, event_summary(e)] for e in shown]
    caption = f"session {sid}: {len(events)} events"
    if len(shown) < len(events):
        caption += f" (the last {len(shown)} shown)"
    show_table(["seq", "time", "event", "details"], rows, caption)


def cost(args: argparse.Namespace) -> None:
    """``%claude cost [ID]``: cost and token totals (from the log: they survive restarts)."""
    st = source(args.config, args.name, args.id)[2]
    print(f"{st.name or 'session'} ({st.session_id}): ${st.cost_usd:.4f} over {st.turns} turns; "
          f"{st.input_tokens:,} input / {st.output_tokens:,} output tokens")


def plans(args: argparse.Namespace) -> None:
    """``%claude plans [ID]``: the approved plans, as Markdown."""
    st = source(args.config, args.name, args.id)[2]
    if not st.plans:
        print(f"{st.name or 'session'} ({st.session_id}): no approved plans yet")
        return
    for p in st.plans:
        head = f"Plan {p.id} (turn {p.turn}), approved {when(p.ts_decided)}"
        if p.mode_after:
            head += f", then mode {p.mode_after}"
        if p.edited:
            head += "; edited by you before approval (this is the approved text)"
        show_markdown(head, p.plan or "")


def source(config: Any, name: str | None, sid: str | None) -> tuple[str, list[Any], Any]:
    """The id, events and state of session ``sid`` (or of this kernel's session ``name``, or
    of the newest log of that name): the live session's if it runs here, else its log's (read
    once)."""
    name = name or "default"
    where = log_dir(config)
    if sid is None:
        s = _registry.get(name)
        if s is not None:
            return s.session_id, list(s.events), s.state
        found = _newest_named(name, where)
        return found.session_id, found.events, found.state
    full = _registry.resolve(sid, where)
    live = {s.session_id: s for s in _registry.sessions().values()}
    if full in live:
        s = live[full]
        return s.session_id, list(s.events), s.state
    path = where / f"{full}.jsonl" if full is not None else None
    if path is None or not path.is_file():
        raise OptionError(f"no session {sid!r} in the event logs ({where}); "
                          "%claude sessions lists them")
    found = read_session_log(path)
    return found.session_id, found.events, found.state


def _newest_named(name: str, where: Path) -> SessionLog:
    """The most recently active log of a session called ``name``."""
    bad: list[tuple[Path, str]] = []
    found = newest(log for log in session_logs(where, bad) if log.state.name == name)
    if found is None:
        raise OptionError(f"no session {name!r} in this kernel or in the logs ({where})"
                          + (f"; {unreadable(bad)}" if bad else ""))
    return found
