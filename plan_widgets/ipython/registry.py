"""The kernel's sessions by name, and how a cell's options map onto them."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any

from ..agent.credentials import require_credentials
from ..model.errors import OptionError
from ..model.options import SessionOptions
from ..store import SessionLog, default_log_dir, resolve_session_id, resumable_log

log = logging.getLogger("plan_widgets")

if TYPE_CHECKING:
    from ..agent.session import Session
    from ..widgets import ControlBar

_sessions: dict[str, Session] = {}
_from_config: dict[str, set[str]] = {}
"""The options each session (by name) took from ``%config``, not from its cells."""
_bars: dict[int, ControlBar] = {}
_prestarted: set[int] = set()
"""Sessions started by ``%load_ext`` (see :mod:`.prestart`) that no cell has used yet."""


def sessions() -> dict[str, Session]:
    """The live sessions of this kernel, by name."""
    return dict(_sessions)


def get(name: str = "default") -> Session | None:
    """The session called ``name``, if one was started."""
    return _sessions.get(name)


def session(name: str = "default", **options: Any) -> Session:
    """Get the session ``name``, starting it if needed (call from code on the kernel's loop).

    Options are those of :class:`plan_widgets.SessionOptions` (model, plan_model, mode, cwd,
    scripted, approval_timeout, log_dir, resume, plan, env, idle_timeout, max_budget_usd,
    denied_tools; the administrator's policy applies over them); they apply when the session
    starts (change a live one with ``await s.set_mode(...)``, ``await s.set_model(...)``, or a
    ``%%claude`` cell's options). A live session keeps running;
    ``resume`` of another conversation under a live session's name is refused (close it
    first), and so is a conversation that already runs here under another name.
    """
    given = {k: v for k, v in options.items() if v is not None}
    if given.get("resume"):
        given = resumed(given)
    return _start(name, given)


def resume(name: str | None, given: dict[str, Any], *, log: SessionLog | None = None,
           default_scripted: str | None = None) -> tuple[Session, bool]:
    """``%claude resume``: start the session ``given["resume"]`` names again, under ``name``
    (default: the name it last ran under), from its log (``log`` if the caller has read it
    already; the log is read once either way). ``default_scripted`` applies if neither
    ``given`` nor the log names a scripted model. Returns the session and True, or the
    session and False if it already runs in this kernel."""
    if log is None:
        log, given = _resume_log(given)
    options = {**log.resume_options(), **given, "resume": log.session_id}
    for s in _sessions.values():
        if s.session_id == log.session_id and not (s.dead or s.closed):
            return s, False
    if default_scripted and not options.get("scripted"):
        options["scripted"] = default_scripted
    return _start(name or log.name or "default", options), True


def _start(name: str, given: dict[str, Any]) -> Session:
    """:func:`session` once a resumed id is resolved (``given`` holds no None values)."""
    s = _sessions.get(name)
    if given.get("resume"):
        _refuse_twice(name, given["resume"])
        if s is not None and s.session_id != given["resume"] and not (s.dead or s.closed):
            raise OptionError(
                f"session {name!r} runs another conversation ({s.session_id}); close it first "
                f"(%claude stop --session {name}), or resume under another name (--session NAME)"
            )
    if s is not None and not (s.dead or s.closed):
        return s
    return _register(_options(name, given))


def _options(name: str, given: dict[str, Any]) -> SessionOptions:
    """A new session's options, checked: bad input and missing credentials are one line."""
    from .policy import current

    opts = SessionOptions(name=name, **current().session_options(given)).validated()
    require_credentials(opts.scripted, opts.env)
    return opts


def _register(opts: SessionOptions, config: set[str] | None = None) -> Session:
    """Start a session and make it the kernel's session of its name (``config``: the options
    it took from ``%config``, if a cell started it)."""
    from ..agent.session import Session
    from .limits import make_room

    make_room(list(_sessions.values()), opts.name)  # the kernel's cap on live CLIs
    tools = None
    if opts.kernel_tools:
        from .kernel.tools import host_tools

        tools = host_tools(opts.name, interrupt=lambda: _interrupt(opts.name))
    s = Session(opts, tools=tools)
    _sessions[opts.name] = s
    _from_config[opts.name] = set(config or ())
    return s


def prestart(settings: dict[str, Any]) -> Session:
    """Start the session ``default`` as a cell with no options would (``%load_ext``)."""
    given = {k: v for k, v in settings.items() if v is not None}
    s = _register(_options("default", given), set(given))
    _prestarted.add(id(s))
    return s


def _fits(s: Session, wanted: dict[str, Any], new: bool) -> bool:
    """Whether a pre-started session can serve a cell's options (else it gives way)."""
    o = s.options
    if any(wanted.get(k) not in (None, getattr(o, k)) for k in ("log_dir", "cli_path",
                                                                 "idle_timeout")):
        return False
    return not (new or wanted.get("resume") or wanted.get("kernel_tools") is False
                or (wanted.get("cwd") and _real(wanted["cwd"]) != o.cwd)
                or (wanted.get("scripted") and _real(wanted["scripted"]) != o.scripted))


async def _give_way(s: Session) -> None:
    """Close a pre-started session no cell used, and remove its log: it never held a turn."""
    _prestarted.discard(id(s))
    await s.close()
    path = s.log_path
    if path is not None and s.state.turns == 0:
        for p in path.parent.glob(f"{s.session_id}.*"):
            with contextlib.suppress(OSError):
                p.unlink()
    _sessions.pop(s.name, None)


def _interrupt(name: str) -> None:
    """The kernel's stop button stopped the agent's code outside any cell: end the turn too."""
    s = _sessions.get(name)
    if s is not None and not (s.closed or s.dead):
        s.interrupt_nowait()


def _refuse_twice(name: str, sid: str) -> None:
    """One conversation, one live session: two CLIs on one transcript would fork it."""
    for other in _sessions.values():
        if other.session_id == sid and other.name != name and not (other.dead or other.closed):
            raise OptionError(f"session {sid} is running in this kernel as {other.name!r}; "
                              f"use --session {other.name}")


def _started_with(s: Session) -> dict[str, Any]:
    """The options a successor of ``s`` keeps unless the cell says otherwise."""
    o = s.options
    return {"model": o.model, "plan_model": o.plan_model, "mode": o.mode, "cwd": o.cwd,
            "scripted": o.scripted, "approval_timeout": o.approval_timeout,
            "log_dir": o.log_dir, "env": dict(o.env) or None, "cli_path": o.cli_path,
            "kernel_tools": o.kernel_tools}


def resolve(prefix: str, log_dir: str | os.PathLike[str] | None) -> str | None:
    """The full id of the session ``prefix`` names, among the logs in ``log_dir`` and the
    sessions of this kernel (see :func:`plan_widgets.store.resolve_session_id`)."""
    return resolve_session_id(prefix, log_dir, also=[s.session_id for s in _sessions.values()])


def resumed(given: dict[str, Any]) -> dict[str, Any]:
    """Options for resuming ``given["resume"]`` (an id, or the start of one): the full id,
    and what the session was started with (cwd, resting mode, models, scripted model) as its
    log tells, under the options given here. Unknown ids raise OptionError."""
    log, given = _resume_log(given)
    return {**log.resume_options(), **given, "resume": log.session_id}


def _resume_log(given: dict[str, Any]) -> tuple[SessionLog, dict[str, Any]]:
    """The log of the session ``given["resume"]`` names, read once, and ``given`` (with the
    log's folder if it is not where ``cwd`` and ``log_dir`` point)."""
    log_dir = default_log_dir(given.get("cwd"), given.get("log_dir"))
    sid = resolve(str(given["resume"]), log_dir)
    log = resumable_log(sid, log_dir) if sid else None
    if log is None and sid and not (given.get("cwd") or given.get("log_dir")):
        # a session of this kernel (closed, or dead) logged elsewhere (--cwd): its own log
        for s in _sessions.values():
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


async def obtain(name: str, wanted: dict[str, Any], defaults: dict[str, Any], *,
                 new: bool = False) -> tuple[Session, list[str]]:
    """The session a cell runs in: reuse, adjust live, or start (again).

    Every option is checked before a live session is replaced (``--new``, ``--resume``), so a
    typo never costs the running session; a successor keeps the old session's options unless
    the cell gives others.
    """
    notes: list[str] = []
    s = _sessions.get(name)
    if s is not None and id(s) in _prestarted:
        # the settings as they are now (a %config since %load_ext counts), then the cell's
        wanted = {**{k: v for k, v in defaults.items() if v is not None},
                  **{k: v for k, v in wanted.items() if v is not None}}
        if _fits(s, wanted, new) and not (s.dead or s.closed):
            _prestarted.discard(id(s))  # the first cell takes it
        else:
            await _give_way(s)
            s, new = None, False
    if wanted.get("resume"):
        given = {k: v for k, v in {"log_dir": defaults.get("log_dir"), **wanted}.items()
                 if v is not None}
        wanted = {**wanted, **{k: v for k, v in resumed(given).items() if k in (
            "resume", "cwd", "mode", "model", "plan_model", "scripted")}}
        _refuse_twice(name, wanted["resume"])
    replace = s is not None and not (s.dead or s.closed) and (
        new or bool(wanted.get("resume") and wanted["resume"] != s.session_id))
    if s is not None and not replace and not (s.dead or s.closed):
        if s.life.idle.leaving:  # asleep: this cell wakes it, within the cap
            from .limits import make_room

            make_room(list(_sessions.values()), name)
        await _adjust(s, wanted)
        return s, notes
    base: dict[str, Any] = _started_with(s) if s is not None else {}
    for k in _from_config.get(name, ()):
        # what the old session took from %config follows %config now (a log_dir fixed after
        # a failure, say); what its cells gave stays
        base.pop(k, None)
    if s is not None and s.dead:
        hint = f" --session {name}" if name != "default" else ""
        notes.append(
            f"The previous session {name!r} ended ({s.dead}). Starting a new one; to "
            f"continue the old conversation: %claude resume {s.session_id}{hint}"
            if s.connected else
            f"The previous session {name!r} ended ({s.dead}). Starting a new one."
        )
    merged = {k: v for k, v in defaults.items() if v is not None}
    merged.update({k: v for k, v in base.items() if v is not None})
    merged.update({k: v for k, v in wanted.items() if v is not None})
    opts = _options(name, merged)  # bad input first, in one line
    if replace and s is not None:
        await s.close()
    taken = {k for k, v in defaults.items() if v is not None and wanted.get(k) is None
             and base.get(k) is None}
    return _register(opts, taken), notes


async def _adjust(s: Session, wanted: dict[str, Any]) -> None:
    """Apply a cell's options to a live session (what can change without a restart)."""
    from ..model.options import RESTING_MODES, check_timeout

    o = s.options
    if wanted.get("cwd") and _real(wanted["cwd"]) != o.cwd:
        raise OptionError(f"session {s.name!r} runs in {o.cwd}; use --new to change --cwd")
    if wanted.get("scripted") and _real(wanted["scripted"]) != o.scripted:
        raise OptionError(f"session {s.name!r} already runs; use --new to change --scripted")
    if wanted.get("kernel_tools") is False and o.kernel_tools:
        raise OptionError(f"session {s.name!r} runs with the kernel tools; use --new to start "
                          "one without them")
    mode = wanted.get("mode")
    if mode and mode not in RESTING_MODES:
        raise OptionError(f"unknown mode {mode!r}: choose one of {', '.join(RESTING_MODES)}")
    if wanted.get("approval_timeout") is not None:
        s.update_options(approval_timeout=check_timeout(wanted["approval_timeout"]))
    if wanted.get("model") and wanted["model"] != o.model:
        s.update_options(model=wanted["model"])
        await s.set_model(wanted["model"])
    if wanted.get("plan_model"):
        s.update_options(plan_model=wanted["plan_model"])
    if mode and mode != s.options.mode:
        if s.plan_in_force:
            # in plan mode --mode names where approval leads; leaving plan mode is the plan
            # card's job (or the toggle's), never a side effect of a cell's option
            s.update_options(mode=mode)
        else:
            await s.set_mode(mode)


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def control_bar(s: Session) -> ControlBar:
    """The one control bar of a session (shown in each of its cells)."""
    from ..widgets import ControlBar

    bar = _bars.get(id(s))
    if bar is None or bar.session is not s:
        bar = ControlBar(s)
        _bars[id(s)] = bar
        # a replaced session's bar goes with it (the cells that show it keep their copy)
        live = {id(x) for x in _sessions.values()}
        for key in [k for k in _bars if k not in live and k != id(s)]:
            del _bars[key]
    return bar


async def close_all(timeout: float = 10) -> None:
    """Close every session (kernel shutdown, extension unload)."""
    live = [s for s in _sessions.values() if not s.closed]
    if live:
        await asyncio.gather(*(s.close(timeout) for s in live), return_exceptions=True)


def _cancel_pending_at_exit() -> None:
    """Kernel shutdown: pending decisions end as cancelled (never approved), in the log too.

    The CLI exits by itself once the kernel's pipes close (measured: within 3 s)."""
    for s in list(_sessions.values()):
        try:
            s.end_decisions("close")
        except Exception:  # at exit: the other sessions' decisions must still end
            log.exception("could not end the decisions of %s", s.name)


atexit.register(_cancel_pending_at_exit)
