"""Is a frontend there to click? The kernel's one probe (docs/unattended.md, "Is anyone there?";
docs/frontends.md).

Two questions, asked in turn, because the first is quiet and the second is not:

1. **A widget manager's answer** (quiet). At ``%load_ext`` the kernel shows no widget but
   creates two models: a ``Label`` and a ``jsdlink`` from its ``value`` to its own
   ``description``. A widget manager (JupyterLab, Notebook 7, VS Code's widget webview, any
   ipywidgets 8 frontend) builds the link model as it builds every model, and the link, being
   JavaScript, copies the value at once and sends it back as a state update of the label
   (ipywidgets ``widget_link.ts``: ``updateBindings`` → ``updateValue`` → ``save_changes``).
   The kernel hears a page without a word in its console. An executor (papermill, nbconvert,
   nbclient, nbval, a jupyter_client script) runs no JavaScript and sends nothing back.
2. **A kernel connection's answer** (the fallback, after :data:`LINK_WAIT`; the probe's
   models close then). A comm opened for
   a target no frontend knows (:data:`PROBE_TARGET`) is closed at once by every
   ``@jupyterlab/services`` kernel connection, with or without a widget manager, and
   JupyterLab's logs "Exception opening new comm" and "Object 'plan_widgets.presence' not
   found in registry" as it does (``kernel/default.ts`` ``_handleCommOpen``): asked only when
   no widget manager answered, so only a frontend that has none sees it.

A frontend is there once either answers (or once ipywidgets' control comm is open: a page's
widget manager connected after ipywidgets was imported, a page reloaded). No answer within
:data:`FALLBACK_WAIT` of the fallback (:data:`PROBE_TIMEOUT` after ``%load_ext``): no one
can click. Only a cell that needs the answer waits for it (the first ``%%claude`` cell of a run,
while its turn goes on).
The answers may come on a kernel subshell's thread (JupyterLab 4.6 and Notebook 7.6 send
widget messages over one): they are handed to the kernel's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

LINK_WAIT = 4.0
"""Seconds the quiet question has before the fallback is asked (measured in a browser on a
loaded machine: the link's answer came 1.2-2.7 s, once 3.3 s, after ``%load_ext``, as the
page loaded ipywidgets' controls and the kernel ran the next cell; docs/frontends.md)."""
FALLBACK_WAIT = 3.0
"""Seconds the fallback has, however late it was asked (a cell that blocked the loop)."""
PROBE_TIMEOUT = LINK_WAIT + FALLBACK_WAIT
"""Seconds from ``%load_ext`` after which no answer means no one can click."""
PROBE_TARGET = "plan_widgets.presence"
_MARK = "plan_widgets presence"


class Presence:
    """The kernel's one probe: has a frontend answered, or a widget manager connected?"""

    def __init__(self) -> None:
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self.seen = asyncio.Event() if self._loop is not None else None
        self.started: float | None = None
        self.asked_kernel: float | None = None  # when the fallback comm was opened
        self.answered_by: str | None = None  # "widgets", "kernel" or "control"
        self.answered_after: float | None = None  # seconds from the start
        self._models: list[Any] = []
        self._comm: Any = None

    def start(self) -> None:
        if self.started is not None or self._loop is None:
            return
        self.started = time.monotonic()
        try:
            self._models = _link_probe(lambda: self._heard("widgets"))
        except Exception:  # no ipywidgets comm channel: the fallback will say
            self._models = []
        self._loop.call_later(LINK_WAIT, self._ask_kernel)

    def _ask_kernel(self) -> None:
        """The fallback: a comm no frontend knows, which every kernel connection closes."""
        if self.asked_kernel is not None or self.answered_by is not None:
            return
        self.asked_kernel = time.monotonic()
        self._close_models()  # (no model of the probe outlives its question)
        try:
            import comm

            self._comm = comm.create_comm(target_name=PROBE_TARGET, data={})
            self._comm.on_close(lambda _m: self._heard("kernel"))
        except Exception:  # no kernel comm channel: no frontend can answer
            self._comm = None

    def _heard(self, how: str) -> None:
        """An answer, maybe on a subshell's thread: the loop notes it."""
        if self.started is not None and self.answered_after is None:
            self.answered_after = round(time.monotonic() - self.started, 3)  # (as it came)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._see, how)

    def _see(self, how: str) -> None:
        if self.seen is None or self.seen.is_set():
            return
        self.answered_by = how
        self.seen.set()
        self._close_models()

    def _close_models(self) -> None:
        models, self._models = self._models, []
        for m in models:
            with contextlib.suppress(Exception):
                m.close()

    def _deadline(self) -> float:
        assert self.started is not None
        if self.asked_kernel is None:
            return self.started + PROBE_TIMEOUT
        return self.asked_kernel + FALLBACK_WAIT

    async def frontend(self) -> bool:
        """Whether a frontend answered (waits at most what is left of the probe's time)."""
        self.start()
        if self.seen is None or self.started is None:
            return False
        widgets = sys.modules.get("ipywidgets")  # a widget manager that connected later (a
        if widgets is not None and getattr(widgets.Widget, "_control_comm", None) is not None:
            self._see("control")  # page reloaded) opened ipywidgets' control comm
        if not self.seen.is_set() and time.monotonic() - self.started >= LINK_WAIT:
            self._ask_kernel()  # (its timer has not run: a cell blocked the loop)
        while not self.seen.is_set():
            left = self._deadline() - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.seen.wait(), left)
        return self.seen.is_set()


def _link_probe(heard: Any) -> list[Any]:
    """A label and a JavaScript link from its value to its description (never displayed);
    ``heard()`` runs when a frontend's link copies the value back."""
    import ipywidgets as w

    label = w.Label(value=_MARK)
    label.observe(lambda change: heard() if change["new"] == _MARK else None, "description")
    link = w.jsdlink((label, "value"), (label, "description"))
    return [link, label]
