"""The ``%claude`` line magic's subcommands."""

from __future__ import annotations

import asyncio
import shlex
import time
from pathlib import Path
from typing import Any

from IPython.display import HTML, display

from ._options import OptionError
from ._render import escape, summarize

USAGE = """usage: %claude COMMAND [--session NAME]

commands:
  status              the session's state, mode, model and pending decision
  interrupt           interrupt the running turn (a pending decision is cancelled)
  stop                end the session (the CLI exits)
  sessions            sessions of this kernel, and those found in the event logs
  plan on|off         enter or leave plan mode live
  resume [ID]         resume a session by id (default: the newest in the logs)
  log                 the session's events as a table
  cost                cost and token totals (they survive restarts)

%%claude --help lists the cell magic's options."""


def _spawn(coro: Any) -> None:
    task = asyncio.get_running_loop().create_task(coro)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


def run(magics: Any, line: str) -> Any:
    """Dispatch one ``%claude`` line."""
    from . import _registry
    from ._magics import _Usage

    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise _Usage(f"%claude: {e}") from e
    name = "default"
    if "--session" in argv:
        i = argv.index("--session")
        if i + 1 >= len(argv):
            raise _Usage("%claude: --session needs a name")
        name = argv[i + 1]
        del argv[i : i + 2]
    if not argv or argv[0] in ("-h", "--help", "help"):
        raise _Usage(USAGE)
    cmd, rest = argv[0], argv[1:]
    s = _registry.get(name)
    if cmd == "sessions":
        return _sessions(magics)
    if cmd == "resume":
        return _resume(magics, name, rest)
    if cmd in ("log", "cost") and (s is None):
        return _from_logs(magics, cmd, name)
    if cmd not in ("status", "interrupt", "stop", "plan", "log", "cost"):
        raise _Usage(f"%claude: unknown command {cmd!r}\n{USAGE.splitlines()[0]}")
    if s is None:
        raise OptionError(f"no session {name!r} yet: run a %%claude cell first")
    if cmd == "status":
        st = s.state
        d = s.pending
        pend = f", waiting for a {d.kind} decision" if d else ""
        print(f"{s.name}: {s.status}{pend}; mode {st.mode} (resting {s.options.mode}); "
              f"model {st.model}; {st.turns} turns; ${st.cost_usd:.4f}; id {s.session_id}")
        if s.dead:
            print(f"ended: {s.dead}")
        return None
    if cmd == "interrupt":
        s.interrupt_nowait()
        print(f"{s.name}: interrupt sent")
        return None
    if cmd == "stop":
        for d in s._open_decisions():
            d.cancel("close")
        _spawn(s.close())
        print(f"{s.name}: stopping (id {s.session_id}; %claude resume {s.session_id} continues it)")
        return None
    if cmd == "plan":
        if rest not in (["on"], ["off"]):
            raise _Usage("usage: %claude plan on|off")
        _spawn(s.set_plan_mode(rest[0] == "on"))
        return None
    if cmd == "log":
        return _log_table(s.events)
    if cmd == "cost":
        return _cost(s.state)
    return None


def _log_dir(magics: Any) -> Path:
    from ._store import default_log_dir

    return Path(default_log_dir(None, getattr(magics, "log_dir", None)))


def _sessions(magics: Any) -> None:
    from . import _registry
    from ._store import list_sessions

    live = _registry.sessions()
    rows = []
    seen = set()
    for s in live.values():
        seen.add(s.session_id)
        rows.append((s.name, s.session_id, "this kernel: " + s.status, s.state.turns,
                     s.state.cost_usd, s.state.mode))
    for info in list_sessions(_log_dir(magics)):
        if info.session_id in seen:
            continue
        rows.append((info.name, info.session_id, time.strftime("%Y-%m-%d %H:%M",
                     time.localtime(info.started)), info.turns, info.cost_usd, info.last_mode))
    if not rows:
        print("no sessions yet")
        return
    head = ["name", "id", "started / state", "turns", "cost", "last mode"]
    _table(head, [[r[0], r[1], r[2], r[3], f"${(r[4] or 0):.4f}", r[5]] for r in rows])


def _table(head: list[str], rows: list[list[Any]]) -> None:
    h = "".join(f"<th>{escape(str(c))}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows
    )
    text = "\n".join(" | ".join(str(c) for c in r) for r in [head, *rows])
    display({"text/html": f"<table><tr>{h}</tr>{body}</table>", "text/plain": text}, raw=True)


def _log_table(events: list[Any]) -> None:
    rows = []
    for e in events:
        data = e.model_dump(exclude={"type", "ts", "seq"})
        rows.append([e.seq, time.strftime("%H:%M:%S", time.localtime(e.ts)), e.type,
                     summarize(data, 140)])
    if not rows:
        print("no events yet")
        return
    _table(["seq", "time", "event", "details"], rows)


def _cost(st: Any) -> None:
    print(f"{st.name or 'session'}: ${st.cost_usd:.4f} over {st.turns} turns; "
          f"{st.input_tokens:,} input / {st.output_tokens:,} output tokens")


def _from_logs(magics: Any, cmd: str, name: str) -> None:
    from ._events import fold
    from ._store import list_sessions, read_events

    for info in list_sessions(_log_dir(magics)):
        if info.name == name:
            events = read_events(info.path)
            if cmd == "log":
                return _log_table(events)
            return _cost(fold(events))
    raise OptionError(f"no session {name!r} in this kernel or in the logs")


def _resume(magics: Any, name: str, rest: list[str]) -> None:
    from . import _registry
    from ._store import list_sessions

    if rest:
        sid = rest[0]
    else:
        found = list_sessions(_log_dir(magics))
        if not found:
            raise OptionError("no session to resume: no event logs found")
        sid = found[0].session_id
    _spawn(_resume_async(magics, name, sid))
    print(f"resuming {sid} as session {name!r}")
    _ = _registry


async def _resume_async(magics: Any, name: str, sid: str) -> None:
    from . import _registry

    defaults = {
        "model": magics.model, "plan_model": magics.plan_model, "mode": magics.mode,
        "approval_timeout": magics.approval_timeout, "log_dir": magics.log_dir,
        "scripted": magics.scripted,
    }
    s, notes = await _registry.obtain(name, {"resume": sid}, defaults)
    for n in notes:
        print(n)
    _ = HTML
    display_resumed(s)


def display_resumed(s: Any) -> None:
    """Show the restored markers and history of a resumed session."""
    from . import _registry

    bar = _registry.control_bar(s)
    display(bar)
