"""The ``%claude`` line magic's subcommands, and the history views of session logs.

Everything shown here comes from the event log (or the live session's events, which are the
same): :func:`plan_widgets.model.events.fold` gives the state, and the tables are built from
escaped text only (model-written text such as plans goes through the safe Markdown path).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from IPython.display import display

from ..model.errors import OptionError
from ..render.markdown import NO_MATH, escape, summarize

USAGE = """usage: %claude COMMAND [ARGS] [--session NAME]

commands:
  status              the session's state, mode, model and pending decision
  interrupt           interrupt the running turn (a pending decision is cancelled)
  stop                end the session (the CLI exits; %claude resume continues it)
  plan on|off         enter or leave plan mode live
  sessions            sessions of this kernel, and those found in the event logs
  resume [ID] [--scripted FILE]
                      continue a session after a restart (default: the newest in the logs):
                      the CLI reconnects with its own transcript, the markers, plans and
                      cost come back from the log, and a decision that was still pending
                      shows as expired (it can no longer be answered)
  log [ID]            a session's events as a table (default: this kernel's session)
  cost [ID]           cost and token totals, from the log (they survive restarts)
  plans [ID]          the approved plans

ID is a session id from %claude sessions (its first characters are enough).

Event logs: one JSONL file per session, <log dir>/<session id>.jsonl, appended as events
happen (secrets redacted). The log dir is %config ClaudeMagics.log_dir, else the
PLAN_WIDGETS_LOG_DIR environment variable, else <cwd>/.plan_widgets/sessions.
%%claude --help lists the cell magic's options."""

MAX_LOG_ROWS = 500
"""``%claude log`` shows at most this many events (the newest)."""


def _spawn(coro: Any, failed: str | None = None) -> None:
    """Run ``coro`` on the kernel's loop; if it fails, ``failed: <error>`` goes to stderr
    (the cell that asked for it, in ipykernel 7) instead of nowhere."""
    from ..agent.tasks import spawn

    def done(t: asyncio.Task[Any]) -> None:
        e = None if t.cancelled() else t.exception()
        if e is not None and failed is not None:
            print(f"{failed}: {_one_line(str(e))}", file=sys.stderr)

    spawn(coro).add_done_callback(done)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@contextmanager
def _reading_logs(cmd: str) -> Iterator[None]:
    """An event log that cannot be read (a corrupt line, no permission) is a one-line error
    of the command, not a traceback."""
    from ..store import LogError

    try:
        yield
    except (LogError, OSError) as e:
        raise OptionError(f"%claude {cmd}: cannot read the event log: {_one_line(str(e))}"
                          ) from None


def _take(argv: list[str], flag: str) -> str | None:
    """Remove ``flag VALUE`` from ``argv`` and return VALUE (None if absent)."""
    from .magics import _Usage

    if flag not in argv:
        return None
    i = argv.index(flag)
    if i + 1 >= len(argv):
        raise _Usage(f"%claude: {flag} needs a value")
    value = argv[i + 1]
    del argv[i : i + 2]
    return value


def run(magics: Any, line: str) -> Any:
    """Dispatch one ``%claude`` line."""
    from . import registry as _registry
    from .magics import _Usage

    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise _Usage(f"%claude: {e}") from e
    given_name = _take(argv, "--session")
    name = given_name or "default"
    if not argv or argv[0] in ("-h", "--help", "help"):
        raise _Usage(USAGE)
    cmd, rest = argv[0], argv[1:]
    if cmd == "sessions":
        _no_args(cmd, rest)
        with _reading_logs(cmd):
            return _sessions(magics)
    if cmd == "resume":
        with _reading_logs(cmd):
            return _resume(magics, given_name, rest)
    if cmd in ("log", "cost", "plans"):
        with _reading_logs(cmd):
            return _history_command(magics, cmd, name, rest)
    if cmd not in ("status", "interrupt", "stop", "plan"):
        raise _Usage(f"%claude: unknown command {cmd!r}\n{USAGE.splitlines()[0]}")
    s = _registry.get(name)
    if s is None:
        raise OptionError(f"no session {name!r} yet: run a %%claude cell first")
    if cmd == "status":
        _no_args(cmd, rest)
        st = s.state
        d = s.pending
        pend = f", waiting for a {d.kind} decision" if d else ""
        mode = st.mode or "not reported yet"
        if st.requested_mode and st.requested_mode != st.mode:
            mode += f" (→ {st.requested_mode} requested)"
        elif st.refused:
            mode += f" (last change refused: {st.refused})"
        print(f"{s.name}: {s.status}{pend}; mode {mode}; resting {s.options.mode}; "
              f"model {st.model or 'not reported yet'}; {st.turns} turns; ${st.cost_usd:.4f}; "
              f"id {s.session_id}")
        if s.dead:
            print(f"ended: {s.dead}")
        return None
    if cmd == "interrupt":
        _no_args(cmd, rest)
        _not_ended(s, "nothing to interrupt")
        if s.pending is None and not s.busy:
            print(f"{s.name}: no turn is running; nothing to interrupt")
            return None
        s.interrupt_nowait()
        print(f"{s.name}: interrupt sent")
        return None
    if cmd == "stop":
        _no_args(cmd, rest)
        again = f"%claude resume {s.session_id} continues it"
        if s.closed:
            print(f"{s.name} is already closed (id {s.session_id}; {again})")
            return None
        for d in s.open_decisions():
            d.cancel("close")
        _spawn(s.close())
        if s.dead:
            print(f"{s.name} had already ended ({_one_line(s.dead)}); closed it "
                  f"(id {s.session_id}; {again})")
        else:
            print(f"{s.name}: stopping (id {s.session_id}; {again})")
        return None
    if rest not in (["on"], ["off"]):
        raise _Usage("usage: %claude plan on|off")
    _not_ended(s, f"cannot turn plan mode {rest[0]}")
    on = rest[0] == "on"
    target = "plan" if on else s.options.mode
    st = s.state
    if st.mode == target and st.requested_mode in (None, target):
        print(f"{s.name}: plan mode is already {rest[0]}"
              + ("" if on else f" (mode {target})"))
    else:
        print(f"{s.name}: plan mode {rest[0]} (asked; the marker shows when the CLI confirms)")
    _spawn(s.set_plan_mode(on), failed=f"%claude plan {rest[0]}")
    return None


def _not_ended(s: Any, what: str) -> None:
    """One line, not a false promise, when session ``s`` is closed or dead."""
    if s.closed:
        raise OptionError(f"{s.name} is closed: {what} (%claude resume {s.session_id} "
                          "continues it)")
    if s.dead:
        raise OptionError(f"{s.name} has ended ({_one_line(s.dead)}): {what} "
                          f"(%claude resume {s.session_id} continues it)")


def _no_args(cmd: str, rest: list[str]) -> None:
    from .magics import _Usage

    if rest:
        raise _Usage(f"%claude {cmd}: unexpected {rest[0]!r} (see %claude --help)")


def _log_dir(magics: Any) -> Path:
    from ..store import default_log_dir

    return Path(default_log_dir(None, getattr(magics, "log_dir", None))).absolute()


# -- sessions --------------------------------------------------------------------------------


def _when(ts: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.localtime(ts)) if ts else "?"


def _sessions(magics: Any) -> None:
    from ..store import list_sessions
    from . import registry as _registry

    rows = []
    seen = set()
    bad: list[tuple[Path, str]] = []
    for s in _registry.sessions().values():
        seen.add(s.session_id)
        st = s.state
        rows.append([s.session_id, s.name, _when(st.started), st.turns, f"${st.cost_usd:.4f}",
                     st.mode or "?", len(st.pending_ids), "this kernel: " + s.status])
    for info in list_sessions(_log_dir(magics), bad):
        if info.session_id in seen:
            continue
        rows.append([info.session_id, info.name or "?", _when(info.started), info.turns,
                     f"${info.cost_usd:.4f}", info.last_mode or "?",
                     # its callbacks died with the kernel that asked: resume expires them
                     f"{info.pending} unanswered" if info.pending else 0, info.where])
    if not rows and not bad:
        print(f"no sessions yet (no event logs in {_log_dir(magics)})")
        return
    if rows:
        _table(["id", "name", "started", "turns", "cost", "last mode", "pending", "where"],
               rows, f"event logs in {_log_dir(magics)}")
    if bad:
        print(_unreadable(bad))


def _unreadable(bad: list[tuple[Path, str]]) -> str:
    """One line about the logs that cannot be read (and why the first cannot)."""
    return (f"{len(bad)} event log(s) cannot be read and are left out: "
            + ", ".join(p.name for p, _ in bad[:6]) + (", ..." if len(bad) > 6 else "")
            + f" ({_one_line(bad[0][1])})")


def _table(head: list[str], rows: list[list[Any]], caption: str = "") -> None:
    """Display a table: escaped HTML for the page, aligned text for text/plain."""
    h = "".join(f"<th style=\"text-align:left\">{escape(c)}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td style=\"text-align:left\">{escape(c)}</td>" for c in r) + "</tr>"
        for r in rows
    )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    cells = [[str(c) for c in r] for r in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in cells)
    if caption:
        text = caption + "\n" + text
    # NO_MATH: JupyterLab typesets text/html, and cells hold model text ($HOME ... $X)
    display({"text/html": f"<table class=\"pw-table {NO_MATH}\">{cap}"
                          f"<tr>{h}</tr>{body}</table>",
             "text/plain": text}, raw=True)


# -- log, cost, plans ------------------------------------------------------------------------


def _history_command(magics: Any, cmd: str, name: str, rest: list[str]) -> None:
    from .magics import _Usage

    if len(rest) > 1:
        raise _Usage(f"usage: %claude {cmd} [ID] [--session NAME]")
    sid, events, state = _history_source(magics, name, rest[0] if rest else None)
    if cmd == "log":
        _log_table(events, sid)
    elif cmd == "cost":
        _cost(state)
    else:
        _plans(state)


def _history_source(magics: Any, name: str, sid: str | None) -> tuple[str, list[Any], Any]:
    """The events and state of session ``sid`` (or of this kernel's session ``name``, or of
    the newest log of that name): the live session's if it runs here, else its log's."""
    from ..model import fold
    from ..store import find_session_log, list_sessions, read_events
    from . import registry as _registry

    live = {s.session_id: s for s in _registry.sessions().values()}
    log_dir = _log_dir(magics)
    if sid is None:
        s = _registry.get(name)
        if s is not None:
            return s.session_id, list(s.events), s.state
        bad: list[tuple[Path, str]] = []
        for info in list_sessions(log_dir, bad):
            if info.name == name:
                sid = info.session_id
                break
        else:
            raise OptionError(f"no session {name!r} in this kernel or in the logs ({log_dir})"
                              + (f"; {_unreadable(bad)}" if bad else ""))
    full = resolve_id(sid, log_dir)
    if full in live:
        s = live[full]
        return s.session_id, list(s.events), s.state
    path = find_session_log(full, log_dir) if full is not None else None
    if path is None:
        raise OptionError(f"no session {sid!r} in the event logs ({log_dir}); "
                          "%claude sessions lists them")
    events = read_events(path)
    return path.stem, events, fold(events)


def resolve_id(prefix: str, log_dir: Path) -> str | None:
    """The full id of the session ``prefix`` names, among the logs in ``log_dir`` and the
    sessions of this kernel: the one whose id it is, or the one whose id starts with it.
    None if none; several raise OptionError naming them (never one of them, silently)."""
    from ..store import ambiguous, session_ids
    from . import registry as _registry

    if not prefix:
        return None
    live = [s.session_id for s in _registry.sessions().values()]
    if prefix in live:
        return prefix
    found = sorted(set(session_ids(prefix, log_dir))
                   | {sid for sid in live if sid.startswith(prefix)})
    if prefix in found:
        return prefix
    if len(found) > 1:
        raise OptionError(ambiguous(prefix, found))
    return found[0] if found else None


def _log_table(events: list[Any], sid: str = "") -> None:
    if not events:
        print("no events yet")
        return
    shown = events[-MAX_LOG_ROWS:]
    rows = []
    for e in shown:
        rows.append([e.seq, _when(e.ts, "%H:%M:%S"), e.type, event_summary(e)])
    caption = f"session {sid}: {len(events)} events"
    if len(shown) < len(events):
        caption += f" (the last {len(shown)} shown)"
    _table(["seq", "time", "event", "details"], rows, caption)


def event_summary(e: Any, limit: int = 140) -> str:
    """One line of plain text about an event (escape it before putting it in HTML)."""
    t = e.type
    if t == "session:started":
        text = (f"{'resumed' if e.resumed_from else 'started'} in {e.cwd}; resting mode "
                f"{e.resting_mode}; model {e.model or 'default'}")
    elif t == "turn:started":
        text = f"turn {e.turn}{' (plan)' if e.plan else ''}: {e.prompt}"
    elif t == "turn:ended":
        cost = f"; ${e.cost_usd:.4f} (running total)" if e.cost_usd is not None else ""
        text = (f"turn {e.turn} {e.result}; {e.input_tokens:,} in / {e.output_tokens:,} out"
                f"{cost}" + (f"; {e.message}" if e.message else ""))
    elif t == "plan:mode":
        text = f"{e.mode} {e.state} ({e.source})" + (f": {e.detail}" if e.detail else "")
    elif t == "plan:proposed":
        text = f"plan {e.decision_id}: {e.plan}"
    elif t == "plan:decided":
        text = f"plan {e.decision_id} {e.outcome} by {e.by}"
        if e.mode_after:
            text += f"; next mode {e.mode_after}"
        if e.feedback:
            text += f"; feedback: {e.feedback}"
    elif t == "model:switched":
        text = f"{e.from_model or '?'} → {e.to_model or '?'} ({e.why})"
    elif t == "question:asked":
        text = f"{e.decision_id}: " + " / ".join(str(q.get("question", "")) for q in e.questions)
    elif t == "question:answered":
        text = f"{e.decision_id} {e.outcome} by {e.by}" + (
            ": " + "; ".join(f"{k} = {v}" for k, v in e.answers.items()) if e.answers else "") + (
            "; notes: " + "; ".join(f"{k}: {v}" for k, v in e.notes.items()) if e.notes else "")
    elif t == "tool:requested":
        text = f"{e.decision_id} {e.tool} {summarize(e.input, limit)}"
    elif t == "tool:decided":
        text = f"{e.decision_id} {e.outcome} by {e.by}" + (f": {e.reason}" if e.reason else "")
    elif t == "error":
        text = f"{e.kind}: {e.message}"
    else:
        text = summarize(e.model_dump(exclude={"type", "ts", "seq"}), limit)
    return summarize(text, limit)


def _cost(st: Any) -> None:
    print(f"{st.name or 'session'} ({st.session_id}): ${st.cost_usd:.4f} over {st.turns} turns; "
          f"{st.input_tokens:,} input / {st.output_tokens:,} output tokens")


def _plans(st: Any) -> None:
    plans = list(st.plans)
    if not plans:
        print(f"{st.name or 'session'} ({st.session_id}): no approved plans yet")
        return
    from .magics import in_kernel

    for p in plans:
        head = f"Plan {p.id} (turn {p.turn}), approved {_when(p.ts_decided)}"
        if p.mode_after:
            head += f", then mode {p.mode_after}"
        if in_kernel():
            from ..render.markdown import markdown_bundle

            display({"text/html": f"<b>{escape(head)}</b>", "text/plain": head}, raw=True)
            display(markdown_bundle(p.plan or ""), raw=True)
        else:
            print(head)
            print(p.plan or "")


# -- resume ----------------------------------------------------------------------------------


def _resume(magics: Any, name: str | None, rest: list[str]) -> Any:
    from ..store import list_sessions
    from . import registry as _registry
    from .magics import _Usage

    rest = list(rest)
    scripted = _take(rest, "--scripted")
    if len(rest) > 1 or (rest and rest[0].startswith("-")):
        raise _Usage("usage: %claude resume [ID] [--scripted FILE] [--session NAME]")
    log_dir = _log_dir(magics)
    if rest:
        sid = resolve_id(rest[0], log_dir) or rest[0]  # unknown: resumed() says so
    else:
        live = {s.session_id for s in _registry.sessions().values() if not (s.dead or s.closed)}
        bad: list[tuple[Path, str]] = []
        logs = list_sessions(log_dir, bad)
        found = [i for i in logs if i.session_id not in live]
        if not found:
            if bad:
                raise OptionError(f"no session to resume in {log_dir}: {_unreadable(bad)}")
            if logs:
                raise OptionError("no other session to resume: every session in the logs "
                                  f"({log_dir}) runs in this kernel")
            raise OptionError(f"no session to resume: no event logs in {log_dir}")
        sid = found[0].session_id
    options: dict[str, Any] = {
        "resume": sid, "log_dir": getattr(magics, "log_dir", None),
        "approval_timeout": getattr(magics, "approval_timeout", None), "scripted": scripted,
    }
    logged = _registry.resumed({k: v for k, v in options.items() if v is not None})
    for live in _registry.sessions().values():
        if live.session_id == logged["resume"] and not (live.dead or live.closed):
            print(f"session {live.session_id} is running in this kernel as {live.name!r}")
            display(_registry.control_bar(live))
            return None
    if not logged.get("scripted") and getattr(magics, "scripted", None):
        options["scripted"] = magics.scripted
    if name is None:  # under the name it had (a notebook's cells name their session)
        name = _logged_name(logged["resume"], logged.get("log_dir") or log_dir) or "default"
    s = _registry.session(name, **options)
    show_resumed(s)
    return None


def _logged_name(sid: str, log_dir: Any) -> str | None:
    """The name session ``sid`` last ran under, from its log."""
    from ..store import LogError, find_session_log, read_events

    path = find_session_log(sid, log_dir)
    if path is None:
        return None
    try:
        started = [e for e in read_events(path) if e.type == "session:started"]
    except (OSError, LogError):
        return None
    return started[-1].name if started else None


def show_resumed(s: Any) -> None:
    """Display a resumed session: a note, its control bar, and its history from the log."""
    from . import registry as _registry
    from .magics import in_kernel

    st = s.state
    expired = [d for d in st.decisions.values() if d.status == "expired" and d.by == "restart"]
    note = (f"Resumed session {s.session_id} as {s.name!r}: {st.turns} turns so far, "
            f"${st.cost_usd:.4f}; mode {st.mode or '?'}, model {st.model or '?'}. "
            "The CLI reconnects with its own transcript.")
    if expired:
        note += (f" {len(expired)} decision(s) left pending by the old kernel expired; they can "
                 "no longer be answered.")
    print(note)
    if in_kernel():
        import ipywidgets as w

        box = w.VBox([_registry.control_bar(s), history_widget(s.events, st)])
        display({  # the widget, and the history as text where widgets do not show
            "application/vnd.jupyter.widget-view+json": {
                "version_major": 2, "version_minor": 0, "model_id": box.model_id},
            "text/plain": "\n".join(history_lines(s.events, st)),
        }, raw=True)
    else:
        for line in history_lines(s.events, st):
            print(line)


_STATUS = {
    "pending": "waiting",
    "approved": "Approved",
    "rejected": "Sent back (keep planning)",
    "expired": "Expired",
    "cancelled": "Cancelled",
    "answered": "Answered",
    "allowed": "Allowed",
    "always": "Always allowed",
    "denied": "Denied",
}
_BY = {"restart": "the kernel restarted before an answer; it can no longer be answered",
       "timeout": "no answer in time", "interrupt": "interrupted", "close": "session closed",
       "cli": "withdrawn by the CLI"}


def decision_status(d: Any) -> str:
    """A decision's outcome in words (plain text)."""
    text = _STATUS.get(d.status, d.status)
    if d.status != "pending" and d.by in _BY:
        text += f": {_BY[d.by]}"
    if d.status == "approved" and d.mode_after:
        text += f" (then mode {d.mode_after})"
    if d.superseded and d.status != "approved":
        text += " · superseded by a later plan"
    return text


def _turn_rows(events: list[Any]) -> list[list[Any]]:
    rows: dict[int, list[Any]] = {}
    base = 0.0
    run = 0.0
    for e in events:
        if e.type == "turn:started":
            rows[e.turn] = [e.turn, _when(e.ts, "%m-%d %H:%M:%S"), summarize(e.prompt, 80),
                            "unfinished", ""]
        elif e.type == "session:started":
            base += run
            run = 0.0
        elif e.type == "turn:ended" and e.turn in rows:
            rows[e.turn][3] = e.result + (f": {summarize(e.message, 60)}" if e.message else "")
            if e.cost_usd is not None:
                if e.cost_usd < run:
                    base += run
                rows[e.turn][4] = f"${base + e.cost_usd:.4f}"
                run = e.cost_usd
    return list(rows.values())


def history_lines(events: list[Any], st: Any) -> list[str]:
    """The history of a session as plain text lines (turns, then decisions)."""
    out = [f"turn {r[0]} at {r[1]}: {r[2]} [{r[3]}]" for r in _turn_rows(events)]
    for d in st.decisions.values():
        if d.kind == "tool":
            what = d.tool or ""
        elif d.kind == "plan":
            what = next(iter((d.plan or "").strip().splitlines()), "")
        else:
            what = "; ".join(str(q.get("question", "")) for q in d.questions)
        out.append(f"{d.kind} {d.id} (turn {d.turn}): {decision_status(d)}"
                   + (f" - {summarize(what, 80)}" if what else ""))
    return out


def history_widget(events: list[Any], st: Any) -> Any:
    """A read-only view of a session's past: its turns and its plans and other decisions.

    Nothing in it can be answered (no buttons); plans render through the safe Markdown path.
    """
    import ipywidgets as w

    from ..widgets.markdown import html_output, markdown_output

    parts: list[Any] = []
    rows = _turn_rows(events)
    if rows:
        head = "".join(f"<th style=\"text-align:left\">{h}</th>"
                       for h in ("turn", "started", "prompt", "result", "cost so far"))
        body = "".join("<tr>" + "".join(f"<td style=\"text-align:left\">{escape(c)}</td>"
                                        for c in r) + "</tr>" for r in rows)
        parts.append(html_output(f"<table class=\"pw-history\"><tr>{head}</tr>{body}</table>"))
    for d in st.decisions.values():
        color = {"approved": "#047857", "expired": "#b91c1c"}.get(d.status, "#6b7280")
        title = {"plan": "Plan", "question": "Questions", "tool": f"Tool {d.tool or ''}"}[d.kind]
        status = w.HTML(
            f'<span class="pw-history-status" style="color:{color}"><b>{escape(title)} '
            f"{escape(d.id)}</b> (turn {d.turn}, asked {escape(_when(d.ts_asked, '%H:%M:%S'))}):"
            f" <b>{escape(decision_status(d))}</b></span>"
        )
        body: list[Any] = [status]
        if d.kind == "plan":
            body.append(markdown_output(d.plan or ""))
        elif d.kind == "question":
            text = "; ".join(str(q.get("question", "")) for q in d.questions)
            if d.answers:
                text += " → " + "; ".join(f"{k} = {v}" for k, v in d.answers.items())
            if d.notes:
                text += " (notes: " + "; ".join(f"{k}: {v}" for k, v in d.notes.items()) + ")"
            body.append(w.HTML(f"<span>{escape(summarize(text, 300))}</span>"))
        else:
            body.append(w.HTML(f"<code>{escape(summarize(dict(d.input or {}), 300))}</code>"))
        box = w.VBox(body, layout=w.Layout(border=f"1px dashed {color}", padding="4px 8px",
                                           margin="4px 0"))
        box.add_class("pw-history-decision")
        parts.append(box)
    if not parts:
        parts.append(w.HTML("<i>No turns yet.</i>"))
    out = w.VBox(parts)
    out.add_class("pw-history")
    return out
