"""The session a cell (or code) runs in: reuse the live one, adjust it, or start one (again).

A cell's options either apply to its live session (``--mode``, ``--model``, ...) or need
another CLI (``--new``, ``--resume``, ``--cwd``, ...): then every option is checked before the
live session is replaced, and the successor keeps the old session's options unless the cell
gives others.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ..model.errors import OptionError
from ..model.options import real_path
from . import merge, prestart, registry
from .resume_log import options_to_resume

if TYPE_CHECKING:
    from ..agent.session import Session


def session(name: str = "default", **options: Any) -> Session:
    """Get the session ``name``, starting it if needed (call from code on the kernel's loop).

    Options are those of :class:`plan_widgets.SessionOptions` (model, plan_model, mode, cwd,
    scripted, approval_timeout, log_dir, resume, plan, env, idle_timeout, max_budget_usd,
    denied_tools), and the SDK's agent options by its names (``effort="high"``,
    ``add_dirs=[...]``, ...) or as ``options=ClaudeAgentOptions(...)`` (docs/options.md);
    the administrator's policy applies over them (``ipython/merge.py``); they apply when the
    session starts
    (change a live one with ``await s.set_mode(...)``, ``await s.set_model(...)``, or a
    ``%%claude`` cell's options). A live session keeps running;
    ``resume`` of another conversation under a live session's name is refused (close it
    first), and so is a conversation that already runs here under another name.
    """
    given = merge.from_python(options)
    if given.get("resume"):
        given = options_to_resume(given)
    before = registry.get(name)
    s = registry.start(name, given)
    if s is not before:  # a new session: what it set aside, in one line each
        for line in s.options.set_aside:
            print(f"plan_widgets: {line}", file=sys.stderr)
    return s


async def obtain(name: str, wanted: dict[str, Any], defaults: dict[str, Any], *,
                 new: bool = False) -> tuple[Session, list[str]]:
    """The session a cell runs in: reuse, adjust live, or start (again).

    Every option is checked before a live session is replaced (``--new``, ``--resume``), so a
    typo never costs the running session; a successor keeps the old session's options unless
    the cell gives others.
    """
    notes: list[str] = []
    s, wanted, new = await prestart.first_cell(registry.get(name), wanted, defaults, new)
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
    opts = merge.checked(name, merge.merged(defaults, base, wanted))  # bad input first
    notes += list(opts.set_aside)
    if replace and s is not None:
        await s.close()
    taken = {k for k, v in defaults.items() if v is not None and wanted.get(k) is None
             and base.get(k) is None}
    return registry.register(opts, taken), notes


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
    changed = {k: v for k, v in (wanted.get("agent") or {}).items() if o.agent.get(k) != v}
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
