"""Markdown in widgets: every model-written text goes through the safe renderer first.

ipywidgets has no Markdown widget; an ``Output`` widget holding one ``text/markdown`` output
uses the frontend's own Markdown renderer (``.jp-RenderedMarkdown``). The text it is given is
the neutralized HTML of :mod:`plan_widgets.render.markdown`, never the model's raw text.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import ipywidgets as w

from ..render.markdown import html_block, markdown_bundle, render_html, render_stream
from .shared import shared

# Seconds between updates of a stream: at most about 9 a second, so timer jitter and the cell's
# other updates stay under a budget of 10 a second (docs/benchmarks.md, figure 4).
FLUSH_INTERVAL = 0.11
PAGE_SIZE = 16  # frozen blocks per page (box) of a stream
# At most this share of the kernel's time goes to a stream's updates: an update that took c
# seconds of CPU waits c / VIEW_SHARE before the next. Measured (figure 4's 200 KB answer, 56
# updates): an update that freezes a block costs about 2.1 ms of the kernel's CPU (0.5 ms
# Markdown, the rest three widget messages), one that only redraws a short tail well under 1 ms.
# So a model's usual pace (tens of deltas a second) keeps 9 updates a second, while an answer
# arriving at 30 KB a second (faster than anyone reads) gets 4, and a long code block that
# is re-rendered whole on every update gets fewer still. Issue 35: at 1% the updates were the
# largest part of the view's cost per delta on that answer (14-18 µs of ~150, timed by
# `python -m benchmarks._deltacost --kernel --cpu cell`); at 0.5%, 10 µs, and 4 updates a second.
VIEW_SHARE = 0.005
# ... but never fewer than 4 updates a second, so a stream never looks stuck. (An update's cost
# grows with the text it brings, so without this cap a fast enough stream would push the
# updates ever further apart.)
MAX_INTERVAL = 0.25


def _output(bundle: dict[str, str]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def _markdown(safe_html: str) -> dict[str, Any]:
    return _output({"text/markdown": safe_html, "text/plain": ""})


def markdown_output(src: str, **layout: Any) -> w.Output:
    """An Output widget showing ``src`` as safe Markdown."""
    out = w.Output(layout=w.Layout(**layout)) if layout else w.Output()
    out.outputs = (_output(markdown_bundle(src)),)
    return out


def html_output(safe_html: str, layout: w.Layout | None = None) -> w.Output:
    """An Output widget showing HTML that the caller built from escaped parts (its content in
    its ``comm_open``: no second message, e.g. before a card reaches the page)."""
    outputs = (_html(safe_html),)
    return w.Output(outputs=outputs) if layout is None else w.Output(layout=layout,
                                                                     outputs=outputs)


def _html(safe_html: str) -> dict[str, Any]:
    return _output({"text/markdown": html_block(safe_html, "pw-html"), "text/plain": ""})


def set_html(out: w.Output, safe_html: str) -> None:
    """Replace the Output's content with caller-built safe HTML (one raw HTML block).

    It goes through the same last step as rendered Markdown (:func:`html_block`): ``<pre>``
    newlines kept, no blank line, no ``$`` or ``\\`` a math renderer could take for TeX.
    """
    out.outputs = (_html(safe_html),)


def set_markdown(out: w.Output, src: str) -> None:
    """Replace the Output's content with ``src`` rendered as safe Markdown."""
    out.outputs = (_output(markdown_bundle(src)),)


class StreamingMarkdown:
    """Streams Markdown into a box: complete blocks are frozen once, only the tail re-renders.

    Updates are coalesced to at most one every ``FLUSH_INTERVAL`` seconds, so a 5,000-delta
    answer costs a few dozen widget messages, and no update resends the whole text. Each
    update renders only the text not frozen yet (:func:`render_stream`). A tail that cannot be
    frozen yet (a long list or code block still arriving) is rendered again on each update, so
    the updates are spaced out further when they cost more: at most a ``VIEW_SHARE`` of the
    kernel's time.
    """

    def __init__(self, box: w.Box) -> None:
        self.box = box
        self._chunks: list[str] = []  # joined on demand: `text += delta` copies it every time
        self._frozen = 0
        self._html: list[str] = []  # the rendered frozen blocks, in order
        self._tail: w.Output | None = None
        self._tail_html = ""  # the tail as last shown (the rest of the text, rendered)
        self._shown = 0  # how much of the text the view shows
        self._page: w.Box | None = None
        self._layout = shared("layout")  # every block of every stream: one Layout model
        self._handle: asyncio.TimerHandle | None = None
        self._last = 0.0
        self._interval = FLUSH_INTERVAL
        self.flushes = 0

    @property
    def text(self) -> str:
        """Everything streamed so far."""
        if len(self._chunks) > 1:
            self._chunks[:] = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def html(self) -> str:
        """The whole text as safe HTML, reusing the blocks already rendered (and the tail, when
        the view is up to date)."""
        text = self.text
        if self._shown == len(text):
            return "\n".join(h for h in (*self._html, self._tail_html) if h)
        rest = text[self._frozen :]
        return "\n".join([*self._html, render_html(rest)] if rest else self._html)

    def append(self, delta: str) -> None:
        """Add streamed text; the view catches up within ``FLUSH_INTERVAL``."""
        if not delta:
            return
        self._chunks.append(delta)
        if self._handle is not None:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._last + self._interval - loop.time())
        self._handle = loop.call_later(wait, self.flush)

    def cancel(self) -> None:
        """No more updates (the stream is dropped: a cut message)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def flush(self) -> None:
        """Bring the view up to date now."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        try:
            self._last = asyncio.get_running_loop().time()
        except RuntimeError:
            pass
        text = self.text
        pending = text[self._frozen :]
        if not pending or self._shown == len(text):
            return
        self.flushes += 1
        started = time.thread_time()
        try:
            self._show(text, pending)
        finally:
            cost = time.thread_time() - started
            self._interval = min(MAX_INTERVAL, max(FLUSH_INTERVAL, cost / VIEW_SHARE))

    def _show(self, text: str, pending: str) -> None:
        cut, frozen_html, tail_html = render_stream(pending)
        self._shown = len(text)
        new_children: list[w.Widget] = []
        if cut > 0:
            self._html.append(frozen_html)
            # its content in the comm_open: no second message to fill it
            block = w.Output(layout=self._layout, outputs=(_markdown(frozen_html),))
            # Blocks go into pages of PAGE_SIZE, so no update resends a long children list.
            if self._page is not None and len(self._page.children) < PAGE_SIZE:
                self._page.children = (*self._page.children, block)
            else:
                self._page = w.VBox([block], layout=self._layout)
                new_children.append(self._page)
            self._frozen += cut
            pending = pending[cut:]
        if self._tail is None and pending:
            self._tail = w.Output(layout=self._layout, outputs=(_markdown(tail_html),))
            new_children.append(self._tail)
        if new_children:
            kids = [c for c in self.box.children if c is not self._tail]
            kids.extend(c for c in new_children if c is not self._tail)
            if self._tail is not None:
                kids.append(self._tail)
            self.box.children = tuple(kids)
        self._tail_html = tail_html
        if self._tail is not None:  # unchanged: no message
            self._tail.outputs = (_markdown(tail_html),) if pending else ()
