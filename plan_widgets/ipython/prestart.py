"""The default session's CLI starts when the extension loads, so the first prompt waits less.

A first ``%%claude`` cell spends most of its time before the first streamed text on things that
do not depend on the prompt: importing the SDK (about 1.3 s), starting the CLI and its
``initialize`` (about 0.45 s), the scripted model on offline runs (docs/benchmarks.md, figures
3 and 9). ``%load_ext plan_widgets`` therefore schedules them on the kernel's loop (never
during ``%load_ext`` itself, which stays about 10 ms): the heavy imports run in a worker
thread, then the session ``default`` starts with the ``ClaudeMagics`` settings, as a cell with
no options would start it. The first ``%%claude`` cell then only sends its prompt.

- Nothing starts without credentials (or ``ClaudeMagics.scripted``): there would be nothing
  to say but the credentials line, which the first cell says anyway.
- A first cell whose options need another CLI (``--cwd``, ``--scripted``, ``--resume``,
  ``--no-kernel-tools``, ``--new``) closes the unused session quietly and starts its own; the
  unused session's log goes with it. Options a live session takes (``--mode``, ``--plan``,
  ``--model``) are applied to it as to any live session.
- A pre-started CLI never used sleeps after ``ClaudeMagics.idle_timeout`` like any idle one.
- ``%config ClaudeMagics.prestart = False`` (or in a config file) turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from typing import TYPE_CHECKING, Any

from ..model.options import real_path

if TYPE_CHECKING:
    from ..agent.session import Session

log = logging.getLogger("plan_widgets")
DELAY = 0.05
"""Seconds after ``%load_ext`` before the pre-start begins: the cell that loads the extension
ends first."""
_unused: set[int] = set()
"""Sessions started here (by id) that no cell has used yet."""


def schedule(magics: Any) -> None:
    """Called by ``%load_ext``: pre-start soon, in the background (no running loop, as in
    terminal IPython: nothing)."""
    if not getattr(magics, "prestart", False):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    from ..agent.tasks import spawn

    loop.call_later(DELAY, lambda: spawn(_prestart(magics), name="claude-prestart"))


async def _prestart(magics: Any) -> None:
    from ..agent.credentials import has_credentials
    from . import registry
    from .merge import configured

    settings = configured(magics)
    if _live(registry.get("default")):
        return
    if not settings.get("scripted") and not has_credentials():
        return
    loop = asyncio.get_running_loop()
    for module in ("plan_widgets.agent.session", "plan_widgets.ipython.kernel.tools",
                   "plan_widgets.agent.sdk"):
        await loop.run_in_executor(None, importlib.import_module, module)
    if _live(registry.get("default")):  # a cell came first
        return
    try:
        start_default(settings)
    except Exception as e:  # a bad setting: the first cell says it, in one line
        log.info("no pre-start: %s", e)


def _live(s: Any) -> bool:
    return s is not None and not (s.closed or s.dead)


def start_default(settings: dict[str, Any]) -> Session:
    """Start the session ``default`` as a cell with no options would."""
    from . import registry
    from .merge import checked

    given = {k: v for k, v in settings.items() if v is not None}
    s = registry.register(checked("default", given), set(given))
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
    from .merge import merged

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


async def _give_way(s: Session) -> None:
    """Close a pre-started session no cell used, and remove its log: it never held a turn."""
    from . import registry

    _unused.discard(id(s))
    await s.close()
    path = s.log_path
    if path is not None and s.state.turns == 0:
        for p in path.parent.glob(f"{s.session_id}.*"):
            with contextlib.suppress(OSError):
                p.unlink()
    registry.unregister(s)
