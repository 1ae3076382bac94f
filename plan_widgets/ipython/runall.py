"""Run All in order: whether cells wait behind this ``%%claude`` cell, and whether a click can
reach the kernel while the cell stays busy.

A notebook is run top to bottom: a cell after an agent's step must see that step's work. So a
``%%claude`` cell whose turn stops at a decision keeps its cell busy until the turn has ended
(its decisions included) when a later cell waits behind it (Run All, Run All Below, Shift+Enter
held down), and returns at once when none does, so that a cell the person runs by hand while
the card waits runs at once. It can wait only where a click reaches a busy kernel; elsewhere
it returns as before and says in one line that the cells after it run on.

Measured (docs/cli.md#run-all; JupyterLab 4.6.6, Notebook 7.6.5, ipykernel 7.4.0, Chromium,
and over the Jupyter protocol):

- Run All sends every cell's ``execute_request`` within 1 ms, before any reply; the plan card
  comes 2-3 s later (the CLI's start, then one model round). ipykernel reads shell messages as
  they come and parks each one as a task waiting for the shell's lock (7.x; 6.x: in
  ``msg_queue``), so when a decision opens, the kernel sees the requests queued behind the
  running cell (:func:`cells_queued`; their header ``date`` is the page's clock, within 1 ms
  of this cell's for Run All). A cell the person runs after the card appeared is not there
  yet: nothing is queued, the cell returns, and the later cell runs at once. No clock needs
  comparing, and no page's setting: the queue says it all.
- Clicks while the cell is busy (:func:`clicks_reach_busy_cell`): ipykernel 7.4 hands a
  widget message that comes on the main shell while a cell awaits to the comm at once (it no
  longer waits for the cell's lock), and every ipykernel 7 runs a message that names a
  subshell on that subshell's thread (JupyterLab and Notebook 7 send widget messages over one
  by default). Before 7.4, with no subshell (ipykernel 6, JupyterLab's "Kernel Comms over
  subshells" set to Disabled, VS Code), a click waits for the cell: a cell that waited for it
  would never end.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

NOTICE = ("The cells after this one run now, without this step's work: decide on the card "
          "above, then run them again.")
"""Said once when cells wait behind this one and no click can come before they run."""


def _kernel() -> Any:
    from IPython import get_ipython

    ip = get_ipython()
    return getattr(ip, "kernel", None) if ip is not None else None


def _header(kernel: Any, frames: Any) -> dict[str, Any]:
    """A raw shell message's header (its signature is not checked here: the kernel does
    that when it handles the message)."""
    try:
        _idents, parts = kernel.session.feed_identities(frames, copy=False)
        raw = parts[1]
        return dict(json.loads(getattr(raw, "bytes", raw)))
    except Exception:
        return {}


def _waiting_messages(kernel: Any) -> list[Any]:
    """The raw shell messages the main shell has received and not yet handled."""
    queue = getattr(kernel, "msg_queue", None)  # ipykernel 6: (index, dispatch, (msg,))
    if queue is not None:
        return [item[2][0] for item in list(getattr(queue, "_queue", ())) if item[2]]
    found = []  # ipykernel 7: one task per message, waiting for the shell's lock
    for task in asyncio.all_tasks():
        coro: Any = task.get_coro()
        code = getattr(coro, "cr_code", None)
        if code is None or code.co_name != "shell_main" or coro.cr_frame is None:
            continue
        local = coro.cr_frame.f_locals
        if local.get("subshell_id") is None and "msg" in local:
            found.append(local["msg"])
    return found


def cells_queued() -> list[dict[str, Any]]:
    """The headers of the ``execute_request`` s waiting behind the running cell on the main
    shell (none outside a kernel)."""
    kernel = _kernel()
    if kernel is None:
        return []
    try:
        me = kernel.get_parent("shell")["header"].get("msg_id")
        heads = [_header(kernel, m) for m in _waiting_messages(kernel)]
    except Exception:  # another kernel's inner workings: nothing known is nothing queued
        return []
    return [h for h in heads if h.get("msg_type") == "execute_request" and h.get("msg_id") != me]


def clicks_reach_busy_cell() -> bool:
    """Whether a widget message can reach this kernel while a cell awaits."""
    kernel = _kernel()
    if kernel is None:
        return False
    try:
        import ipykernel

        if tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) >= (7, 4):
            return True
    except (ImportError, ValueError):
        pass
    thread = getattr(kernel, "shell_channel_thread", None)
    try:
        return bool(thread is not None and thread.manager.list_subshell())
    except Exception:
        return False
