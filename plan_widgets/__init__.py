"""plan_widgets: Claude Code sessions in Jupyter, with plan mode you can see and control.

Use ``%load_ext plan_widgets``, then a ``%%claude`` cell. From code::

    s = plan_widgets.session("default", scripted="script.yaml")
    turn = s.ask("Plan a hello-world script")
    decision = await s.wait_for_decision(timeout=30)
    decision.approve()
    await turn

History: each session appends its events to ``<cwd>/.plan_widgets/sessions/<id>.jsonl``
(``log_dir=`` / ``%config ClaudeMagics.log_dir`` / ``$PLAN_WIDGETS_LOG_DIR`` move it);
``list_sessions()`` summarizes the logs, ``fold(read_events(path))`` is a session's state, and
``session(resume=ID)`` continues one after a kernel restart.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent.decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
    from .agent.session import Session
    from .agent.turn import Turn
    from .ipython.kernel.user_tools import tool
    from .ipython.obtain import session
    from .ipython.registry import get, sessions
    from .ipython.unattended import decide_with
    from .model.folding import fold
    from .model.options import SessionOptions
    from .store import list_sessions, read_events

logging.getLogger(__name__).addHandler(logging.NullHandler())  # the app decides where logs go

__version__ = "0.1.0"
__all__ = [
    "Decision",
    "PlanDecision",
    "QuestionDecision",
    "Session",
    "SessionOptions",
    "ToolDecision",
    "Turn",
    "decide_with",
    "fold",
    "get",
    "list_sessions",
    "load_ipython_extension",
    "read_events",
    "session",
    "sessions",
    "tool",
    "unload_ipython_extension",
]

# Each name is imported on first use, so `%load_ext plan_widgets` stays cheap (pydantic, the
# store and the SDK load with the first session; docs/benchmarks.md, figure 3).
_LAZY = {
    "get": ".ipython.registry",
    "decide_with": ".ipython.unattended",
    "session": ".ipython.obtain",
    "tool": ".ipython.kernel.user_tools",
    "sessions": ".ipython.registry",
    "SessionOptions": ".model.options",
    "Session": ".agent.session",
    "Turn": ".agent.turn",
    "Decision": ".agent.decisions",
    "PlanDecision": ".agent.decisions",
    "QuestionDecision": ".agent.decisions",
    "ToolDecision": ".agent.decisions",
    "fold": ".model.folding",
    "list_sessions": ".store",
    "read_events": ".store",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'plan_widgets' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod, __name__), name)


def __dir__() -> list[str]:
    """The public API (``__all__``): the lazy names too, and not this module's own imports."""
    return sorted([*__all__, "__version__"])


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext plan_widgets``: register ``%%claude`` and ``%claude`` (cheap: no SDK)."""
    from .ipython.magics import ClaudeMagics, transform_cell
    from .ipython.policy import check_magics, checked, load, say

    # settings from config files are checked one by one: a wrong one is said and left out
    magics, problems = checked(ClaudeMagics, ipython.config, shell=ipython)
    say(problems + check_magics(magics, load(ipython)))
    ipython.register_magics(magics)
    from .ipython.prestart import schedule
    from .ipython.unattended import check_settings, start_probe

    start_probe()  # is anyone there to click? (docs/unattended.md)
    from .ipython.stop import arm

    arm()  # the kernel's stop button between cells ends a waiting decision (ipython/stop.py)
    schedule(magics)  # the default session's CLI, in the background (ipython.prestart)
    cleanup = ipython.input_transformers_cleanup
    if transform_cell not in cleanup:
        cleanup.append(transform_cell)
    from .ipython.complete import register

    register(ipython)  # Tab in %%claude cells
    check_settings()  # a malformed unattended setting fails the run here, in one line (last:
    # the magics work, and say it again in each %%claude cell until it is fixed)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext plan_widgets``: ``%%claude`` and ``%claude`` are gone (sessions keep
    running until closed; ``%load_ext`` brings the magics back to them)."""
    from .ipython.magics import transform_cell

    cleanup = ipython.input_transformers_cleanup
    if transform_cell in cleanup:
        cleanup.remove(transform_cell)
    from .ipython.complete import unregister

    unregister(ipython)
    magics = ipython.magics_manager.magics
    for kind in ("cell", "line"):
        magics[kind].pop("claude", None)
