"""The kernel's stop button between cells: it ends the decisions that wait, as the control
bar's Interrupt does.

Measured (docs/cli.md#stop-button; ipykernel 7.4, over the Jupyter protocol and in
JupyterLab 4.6 / Notebook 7.6; 6.29 read from its source): the stop button sends the kernel
SIGINT; between cells the kernel ignores it (``IPKernelApp`` sets ``SIG_IGN``; each shell
handler sets its own and puts back ``kernel.saved_sigint_handler`` when it ends), so a card
waiting after its cell returned stayed "Waiting for you" ("Kernel interrupted" in the
server's log, nothing else). A handler in ``saved_sigint_handler`` runs when SIGINT comes
between cells, and only then: while a cell runs, the kernel's own handler interrupts that
cell as before. It hands the work to the kernel's loop (a signal handler may run between any
two bytecodes), where each session with a waiting decision is interrupted: the decision is
cancelled, never approved (the card ended 0.03-0.05 s after the interrupt, no cell run).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("plan_widgets")


def arm() -> None:
    """From the end of the running cell on, SIGINT between cells ends waiting decisions
    (called from ``%load_ext``; once per kernel)."""
    from IPython import get_ipython

    ip = get_ipython()
    kernel = getattr(ip, "kernel", None) if ip is not None else None
    if kernel is None or not hasattr(kernel, "saved_sigint_handler"):
        return  # terminal IPython: Ctrl+C reaches the waiting prompt itself
    if getattr(kernel.saved_sigint_handler, "_pw_stop", False):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return

    def between_cells(_signum: int, _frame: Any) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(stop_waiting)

    between_cells._pw_stop = True  # type: ignore[attr-defined]
    kernel.saved_sigint_handler = between_cells  # put back by the kernel when this cell ends


def stop_waiting() -> int:
    """Interrupt every session whose decision waits; returns how many were."""
    from .registry import sessions

    stopped = 0
    for session in list(sessions().values()):
        if session.pending is not None:
            try:
                session.interrupt_nowait()
                stopped += 1
            except Exception:  # one session's failure must not keep the others waiting
                log.exception("the stop button could not interrupt session %s", session.name)
    return stopped
