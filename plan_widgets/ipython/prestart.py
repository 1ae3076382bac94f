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
- A pre-started CLI that no cell (and no code) has used closes ``UNUSED_TIMEOUT`` after it is
  ready (2 minutes; sooner if ``ClaudeMagics.idle_timeout`` is shorter), its log with it: it
  holds about 200 MB, and what it saves the first cell is one CLI start (docs/benchmarks.md,
  figure 9). A first cell after that starts the session as it would without a pre-start, the
  SDK already imported.
- ``%config ClaudeMagics.prestart = False`` (or in a config file) turns it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent.session import Session

log = logging.getLogger("plan_widgets")
DELAY = 0.05
"""Seconds after ``%load_ext`` before the pre-start begins: the cell that loads the extension
ends first."""
UNUSED_TIMEOUT = 120.0
"""Seconds an unused pre-started session keeps its CLI once it is ready (issue 35; figure 9
measures what the first cell pays once it has closed)."""


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
    from .obtain import configured

    try:
        settings = configured(magics)
    except Exception as e:  # a bad setting (a typo in agent_options): the first cell says it
        log.info("no pre-start: %s", e)
        return
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
    """Start the session ``default`` as a cell with no options would (the first cell takes
    it, or it gives way: ``obtain.first_cell``)."""
    from ..agent.tasks import spawn
    from .obtain import start_unused

    s = start_unused(settings)
    after = min(t for t in (UNUSED_TIMEOUT, s.options.idle_timeout) if t)
    spawn(_close_if_unused(s, after), name="claude-prestart-unused")
    return s


async def _close_if_unused(s: Session, after: float) -> None:
    """Close the pre-started session if nothing has used it ``after`` seconds after its CLI
    is ready (a slow start does not count: the user had no ready CLI to use meanwhile)."""
    from .obtain import close_unused

    with contextlib.suppress(Exception):  # (a CLI that does not start ends as dead)
        await s.wait(None)
    await asyncio.sleep(after)
    if not (s.closed or s.dead) and s.state.turns == 0 and not s.busy and s.pending is None:
        if await close_unused(s):
            log.info("the pre-started session was not used in %.0f s: its CLI closed", after)
