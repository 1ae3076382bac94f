"""A cell's way to its session, in one place: options merged, checked, and applied.

A session's options are, lowest first:

1. the product's defaults (:class:`~plan_widgets.model.options.SessionOptions`);
2. ``%config ClaudeMagics.<setting>`` (:data:`CONFIGURED`) and ``ClaudeMagics.agent_options``
   (the SDK's options by its names, a dict): :func:`configured`;
3. what the session's predecessor was started with, when a cell replaces it
   (:func:`_started_with`);
4. the cell's flags (:func:`from_cell`), or the keyword arguments of
   ``plan_widgets.session(...)`` (:func:`from_python`: the product's names, the SDK's names,
   or ``options=ClaudeAgentOptions(...)``);

merged by :func:`merged` (a later layer wins; agent options merge name by name), then
:func:`checked`: the administrator's policy goes on top (``policy.py``: forbidden modes,
denied tools, the smaller budget), the values are validated (``SessionOptions.validated``:
one line for a mistake; options the product owns set aside with one line each), and
credentials are required. Applied by :func:`obtain`: a live session is reused and adjusted
(``--mode``, ``--model``, ...; :func:`_adjust`), or replaced (``--new``, ``--resume``: every
option checked first, so a typo never costs the running session), or started
(:func:`register`); a pre-started default session (``prestart.py``) is taken by the first
cell when it fits, else it gives way (:func:`first_cell`). The registry (``registry.py``) is
only the kernel's table of live sessions.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..agent.credentials import require_credentials
from ..model import agent_options
from ..model.errors import OptionError
from ..model.options import SessionOptions, real_path
from . import registry
from .resume_log import find_log_to_resume, options_to_resume

if TYPE_CHECKING:
    from ..agent.session import Session
    from ..store import SessionLog

CONFIGURED = ("model", "plan_model", "mode", "approval_timeout", "log_dir", "scripted",
              "cli_path", "kernel_tools", "idle_timeout")
"""``ClaudeMagics`` settings that are a new session's defaults (and ``agent_options``)."""
SESSION_FIELDS = tuple(f.name for f in dataclasses.fields(SessionOptions)
                       if f.name not in ("name", "set_aside"))
CELL_FLAGS = {"effort": "effort", "add_dir": "add_dirs", "allowed_tools": "allowed_tools",
              "append_system_prompt": "append_system_prompt",
              "fallback_model": "fallback_model"}
"""``%%claude`` flags that are agent options (argparse dest → the SDK's name)."""


def configured(config: Any) -> dict[str, Any]:
    """The ``%config ClaudeMagics`` layer (None: a setting left unset; outside IPython all)."""
    out: dict[str, Any] = {k: getattr(config, k, None) if config is not None else None
                           for k in CONFIGURED}
    raw = getattr(config, "agent_options", None) if config is not None else None
    if raw:
        own, agent, notes = agent_options.split(raw, SESSION_FIELDS)
        for k, v in own.items():  # the SDK's name of a setting: as if set under ours
            out[k] = v if out.get(k) is None else out[k]
        out["agent"] = agent
        out["set_aside"] = tuple(notes)
    return out


def from_cell(args: argparse.Namespace) -> dict[str, Any]:
    """The options a ``%%claude`` line gives (None: not given)."""
    agent: dict[str, Any] = {sdk: getattr(args, flag, None) for flag, sdk in CELL_FLAGS.items()}
    tools = agent.get("allowed_tools")
    if tools:
        agent["allowed_tools"] = [t for part in tools for t in part.replace(",", " ").split()]
    return {
        "model": args.model, "plan_model": args.plan_model, "mode": args.mode, "cwd": args.cwd,
        "scripted": args.scripted, "approval_timeout": args.approval_timeout,
        "resume": args.resume,
        "kernel_tools": False if getattr(args, "no_kernel_tools", False) else None,
        "agent": {k: v for k, v in agent.items() if v} or None,
    }


def from_python(options: Mapping[str, Any]) -> dict[str, Any]:
    """``plan_widgets.session(**options)``'s options: the product's names and the SDK's
    (``options=`` a ``ClaudeAgentOptions``: its fields that differ from the defaults)."""
    given = {k: v for k, v in options.items() if v is not None and k != "options"}
    if options.get("options") is not None:
        given = {**agent_options.from_object(options["options"]), **given}
    own, agent, notes = agent_options.split(given, SESSION_FIELDS)
    if "agent" in own:  # the product's own field, given directly
        agent = {**dict(own.pop("agent") or {}), **agent}
    if agent:
        own["agent"] = agent
    if notes:
        own["set_aside"] = tuple(notes)
    return own


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """The layers, lowest first, over each other: a later layer's value wins (None: not
    given); agent options and set-aside lines add up name by name."""
    out: dict[str, Any] = {}
    for layer in layers:
        for k, v in layer.items():
            if v is None:
                continue
            if k == "agent":
                out[k] = {**out.get(k, {}), **v}
            elif k == "set_aside":
                out[k] = tuple(dict.fromkeys([*out.get(k, ()), *v]))
            else:
                out[k] = v
    return out


def checked(name: str, given: Mapping[str, Any]) -> SessionOptions:
    """A new session's options, the policy on top, checked: bad input and missing
    credentials are one line."""
    from .policy import current

    unknown = [k for k in given if k not in (*SESSION_FIELDS, "set_aside")]
    if unknown:
        raise OptionError(agent_options.nearest(unknown[0], SESSION_FIELDS))
    opts = SessionOptions(name=name, **current().session_options(dict(given))).validated()
    require_credentials(opts.scripted, opts.env)
    return opts


# -- from Python ---------------------------------------------------------------------------

def session(name: str = "default", **options: Any) -> Session:
    """Get the session ``name``, starting it if needed (call from code on the kernel's loop).

    Options are those of :class:`plan_widgets.SessionOptions` (model, plan_model, mode, cwd,
    scripted, approval_timeout, log_dir, resume, plan, env, idle_timeout, max_budget_usd,
    denied_tools), and the SDK's agent options by its names (``effort="high"``,
    ``add_dirs=[...]``, ...) or as ``options=ClaudeAgentOptions(...)`` (docs/options.md);
    the administrator's policy applies over them. They apply when the session starts
    (change a live one with ``await s.set_mode(...)``, ``await s.set_model(...)``, or a
    ``%%claude`` cell's options). A live session keeps running; ``resume`` of another
    conversation under a live session's name is refused (close it first), and so is a
    conversation that already runs here under another name.
    """
    given = from_python(options)
    if given.get("resume"):
        given = options_to_resume(given)
    before = registry.get(name)
    s = start(name, given)
    if s is not before:  # a new session: what it set aside, in one line each
        for line in s.options.set_aside:
            print(f"plan_widgets: {line}", file=sys.stderr)
    return s


def start(name: str, given: dict[str, Any]) -> Session:
    """The live session ``name``, or a new one started with ``given`` (no None values; its
    ``resume``, if any, is a full id). Resuming another conversation under a live session's
    name is refused, and so is a conversation that already runs under another name."""
    s = registry.get(name)
    if given.get("resume"):
        registry.refuse_twice(name, given["resume"])
        if s is not None and s.session_id != given["resume"] and not (s.dead or s.closed):
            raise OptionError(
                f"session {name!r} runs another conversation ({s.session_id}); close it first "
                f"(%claude stop --session {name}), or resume under another name (--session NAME)"
            )
    if s is not None and not (s.dead or s.closed):
        return s
    return register(checked(name, given))


def register(opts: SessionOptions, config: set[str] | None = None) -> Session:
    """Start a session and make it the kernel's session of its name (``config``: the options
    it took from ``%config``, if a cell started it)."""
    from ..agent.session import Session
    from .limits import make_room

    make_room(list(registry.sessions().values()), opts.name)  # the kernel's cap on live CLIs
    tools = None
    if opts.kernel_tools:
        from .kernel.tools import host_tools

        tools = host_tools(opts.name, interrupt=lambda: registry.interrupt(opts.name))
    s = Session(opts, tools=tools)
    registry.add(s, config or set())
    return s


def start_from_log(name: str | None, given: dict[str, Any], *, log: SessionLog | None = None,
                   default_scripted: str | None = None) -> tuple[Session, bool]:
    """``%claude resume``: start the session ``given["resume"]`` names again, under ``name``
    (default: the name it last ran under), from its log (``log`` if the caller has read it
    already; the log is read once either way). ``default_scripted`` applies if neither
    ``given`` nor the log names a scripted model. Returns the session and True, or the
    session and False if it already runs in this kernel."""
    if log is None:
        log, given = find_log_to_resume(given)
    options = {**log.resume_options(), **given, "resume": log.session_id}
    for s in registry.sessions().values():
        if s.session_id == log.session_id and not (s.dead or s.closed):
            return s, False
    if default_scripted and not options.get("scripted"):
        options["scripted"] = default_scripted
    return start(name or log.name or "default", options), True


# -- from a cell ----------------------------------------------------------------------------

async def obtain(name: str, wanted: dict[str, Any], defaults: dict[str, Any], *,
                 new: bool = False) -> tuple[Session, list[str]]:
    """The session a cell runs in: reuse, adjust live, or start (again).

    Every option is checked before a live session is replaced (``--new``, ``--resume``), so a
    typo never costs the running session; a successor keeps the old session's options unless
    the cell gives others.
    """
    notes: list[str] = []
    s, wanted, new = await first_cell(registry.get(name), wanted, defaults, new)
    if wanted.get("resume"):
        given = {k: v for k, v in {"log_dir": defaults.get("log_dir"), **wanted}.items()
                 if v is not None}
        wanted = {**wanted, **{k: v for k, v in options_to_resume(given).items() if k in (
            "resume", "cwd", "mode", "model", "plan_model", "scripted")}}
        registry.refuse_twice(name, wanted["resume"])
    replace = s is not None and not (s.dead or s.closed) and (
        new or bool(wanted.get("resume") and wanted["resume"] != s.session_id))
    if s is not None and not replace and not (s.dead or s.closed):
        if s.leaving:  # asleep: this cell wakes it, within the cap
            from .limits import make_room

            make_room(list(registry.sessions().values()), name)
        await _adjust(s, wanted)
        notes += await _new_tools(s)
        return s, notes
    base: dict[str, Any] = _started_with(s) if s is not None else {}
    for k in registry.taken_from_config(name):
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
    opts = checked(name, merged(defaults, base, wanted))  # bad input first
    notes += list(opts.set_aside)
    if replace and s is not None:
        await s.close()
    taken = {k for k, v in defaults.items() if v is not None and wanted.get(k) is None
             and base.get(k) is None}
    return register(opts, taken), notes


def _started_with(s: Session) -> dict[str, Any]:
    """The options a successor of ``s`` keeps unless the cell says otherwise."""
    o = s.options
    return {"model": o.model, "plan_model": o.plan_model, "mode": o.mode, "cwd": o.cwd,
            "scripted": o.scripted, "approval_timeout": o.approval_timeout,
            "log_dir": o.log_dir, "env": dict(o.env) or None, "cli_path": o.cli_path,
            "kernel_tools": o.kernel_tools, "agent": dict(o.agent) or None}


async def _adjust(s: Session, wanted: dict[str, Any]) -> None:
    """Apply a cell's options to a live session (what can change without a restart)."""
    from ..model.options import RESTING_MODES, check_timeout

    o = s.options
    if wanted.get("cwd") and real_path(wanted["cwd"]) != o.cwd:
        raise OptionError(f"session {s.name!r} runs in {o.cwd}; use --new to change --cwd")
    if wanted.get("scripted") and real_path(wanted["scripted"]) != o.scripted:
        raise OptionError(f"session {s.name!r} already runs; use --new to change --scripted")
    if wanted.get("kernel_tools") is False and o.kernel_tools:
        raise OptionError(f"session {s.name!r} runs with the kernel tools; use --new to start "
                          "one without them")
    asked, _ = agent_options.checked(wanted.get("agent") or {})
    if asked.get("add_dirs"):  # as the session holds them
        asked["add_dirs"] = [real_path(str(d)) for d in asked["add_dirs"]]
    changed = {k: v for k, v in asked.items() if o.agent.get(k) != v}
    if changed:
        k = next(iter(changed))
        raise OptionError(f"session {s.name!r} runs with {k}={o.agent.get(k)!r}; agent options "
                          "apply when a session starts: add --new (a new conversation)")
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


async def _new_tools(s: Session, wait: float = 15.0) -> list[str]:
    """The notebook's tools (``@plan_widgets.tool``) changed since the session's CLI started:
    the session takes the new list, and an idle CLI restarts on the same conversation (as
    from sleep) so the next turn can call them; a busy one gets them at its next start."""
    import asyncio

    from .kernel.tools import host_tools

    old = s.host_tools
    fresh = host_tools(s.name, interrupt=lambda: registry.interrupt(s.name)) if old else None
    if fresh is None or old is None or _shape(fresh.tools) == _shape(old.tools):
        return []
    s.host_tools = fresh
    if s.leaving or not s.sleep("idle"):
        return []
    for _ in range(int(wait / 0.05)):
        if s.status == "asleep" or s.dead or s.closed:
            break
        await asyncio.sleep(0.05)
    return ["The notebook's tools changed: the CLI restarts with them (the conversation "
            "goes on)."]


def _shape(tools: Any) -> list[tuple[Any, ...]]:
    return [(t.name, t.description, repr(t.input_schema), t.changes_state) for t in tools]


# -- a pre-started session: taken by the first cell, or it gives way ------------------------

_unused: set[int] = set()
"""Sessions pre-started (by id) that no cell has used yet."""


def start_unused(settings: dict[str, Any]) -> Session:
    """Start the session ``default`` as a cell with no options would (``prestart.py``), to
    be taken by the first cell."""
    given = {k: v for k, v in settings.items() if v is not None}
    s = register(checked("default", given), set(given))
    _unused.add(id(s))
    return s


async def first_cell(s: Session | None, wanted: dict[str, Any], defaults: dict[str, Any],
                     new: bool) -> tuple[Session | None, dict[str, Any], bool]:
    """A cell asks for the session ``s`` (None: none of its name). If ``s`` was pre-started
    and no cell used it yet, the cell takes it when it can serve the cell's options, else it
    gives way (``s`` becomes None, and ``new`` False: there is nothing to replace). Returns
    ``s``, the cell's options (over the settings as they are now: a ``%config`` since
    ``%load_ext`` counts), and ``new``."""
    if s is None or id(s) not in _unused:
        return s, wanted, new
    wanted = merged(defaults, wanted)
    if _fits(s, wanted, new) and not (s.dead or s.closed):
        _unused.discard(id(s))  # the first cell takes it
        return s, wanted, new
    await _give_way(s)
    return None, wanted, False


def _fits(s: Session, wanted: dict[str, Any], new: bool) -> bool:
    """Whether a pre-started session can serve a cell's options (else it gives way)."""
    o = s.options
    if any(wanted.get(k) not in (None, getattr(o, k)) for k in ("log_dir", "cli_path",
                                                                 "idle_timeout")):
        return False
    if dict(wanted.get("agent") or {}) != dict(o.agent):  # agent options need another CLI
        return False
    return not (new or wanted.get("resume") or wanted.get("kernel_tools") is False
                or (wanted.get("cwd") and real_path(wanted["cwd"]) != o.cwd)
                or (wanted.get("scripted") and real_path(wanted["scripted"]) != o.scripted))


async def close_unused(s: Session) -> bool:
    """Close ``s`` as :func:`_give_way` does if no cell has taken it yet (False: one has)."""
    if id(s) not in _unused:
        return False
    await _give_way(s)
    return True


async def _give_way(s: Session) -> None:
    """Close a pre-started session no cell used, and remove its log: it never held a turn."""
    _unused.discard(id(s))
    await s.close()
    path = s.log_path
    if path is not None and s.state.turns == 0:
        for p in path.parent.glob(f"{s.session_id}.*"):
            with contextlib.suppress(OSError):
                p.unlink()
    registry.unregister(s)
