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
PAGE_SIZE = 16  # parts per page (box) of a stream
# An update of a stream used to send three widget messages when a block was complete (the
# block's Output opened, its page's children, the tail) and a fourth later (the block's close
# at the end of the turn): about 0.3 ms of the kernel's CPU each, on its main and iopub threads,
# against well under 0.1 ms for the Markdown of a usual update. So the blocks frozen since the
# last part was sealed and the tail share one Output, replaced whole by one message per update,
# until the blocks hold more than CHUNK characters of HTML (or more than the last update
# brought, for an answer arriving faster than anyone reads): then the part is sealed and the
# next one opens. A usual update resends at most a few KB, which costs the kernel far less than
# a message (figure 4's turn: 65 widget messages against 117, 847 against 743 kB of iopub).
CHUNK = 4_000
# At most this share of the kernel's time goes to a stream's updates: an update that took c
# seconds of CPU waits c / VIEW_SHARE before the next (FLUSH_INTERVAL at least). Measured in a
# kernel (2026-12-06, quiet machine, parts as above): an update at a model's usual pace (400
# to 1,500 characters a second) costs about 0.7 ms of the main thread, so it gets 7 updates a
# second (4.6 with a block per update before the parts); figure 4's answer, arriving at 30 KB a
# second, brings 9 KB to each update at 4 a second, about 1.7 ms (half of it its Markdown).
VIEW_SHARE = 0.005
# ... and never fewer than 2 updates a second, so a stream never looks stuck. (An update's cost
# grows with the text it brings, so without this cap a fast enough stream would push the
# updates ever further apart.) At 4 a second (the floor until issue 35) figure 4's answer got
# 24 updates costing 8.2 µs per delta of the kernel's main thread; at this floor the share
# decides: 16 updates (2.3 a second), 6.3 µs, the answer being far faster than anyone reads.
MAX_INTERVAL = 0.5


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
    answer costs a few dozen widget messages, and no update resends the whole text: the text
    is shown in parts (Outputs) of about ``CHUNK`` characters of HTML, and an update replaces
    only the open part, the last (one message). Each update renders only the text not frozen
    yet (:func:`render_stream`); frozen blocks keep the HTML they were rendered to. A tail that
    cannot be frozen yet (a long list or code block still arriving) is rendered again on each
    update, so the updates are spaced out further when they cost more: at most a
    ``VIEW_SHARE`` of the kernel's time.
    """

    def __init__(self, box: w.Box) -> None:
        self.box = box
        self._chunks: list[str] = []  # joined on demand: `text += delta` copies it every time
        self._frozen = 0
        self._html: list[str] = []  # the rendered frozen blocks, in order
        self._tail_html = ""  # the tail as last shown (the rest of the text, rendered)
        # The open part: the blocks frozen since it opened, then the tail, in one Output that
        # each update replaces whole (one message), until it holds more than CHUNK characters.
        self._open: w.Output | None = None
        self._open_html: list[str] = []
        self._open_size = 0
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
        self._tail_html = tail_html
        if cut > 0:
            self._html.append(frozen_html)
            self._open_html.append(frozen_html)
            self._open_size += len(frozen_html)
            self._frozen += cut
        if self._open is not None and self._open_size > max(CHUNK, len(frozen_html)):
            # sealed: its frozen blocks stay as they are; the tail goes on in a new part
            self._open.outputs = tuple(_markdown(h) for h in self._open_html)
            self._open, self._open_html, self._open_size = None, [], 0
        shown = tuple(_markdown(h) for h in (*self._open_html, tail_html) if h)
        if self._open is not None:
            self._open.outputs = shown  # unchanged: no message
        elif shown:  # its content in the comm_open: no second message to fill it
            self._open = w.Output(layout=self._layout, outputs=shown)
            self._place(self._open)

    def _place(self, part: w.Output) -> None:
        """A new part goes into the last page, or a new one: pages of PAGE_SIZE, so that no
        update resends a long children list. The box itself is the first page (a short answer
        costs two models: its box and one part)."""
        page = self.box if self._page is None else self._page
        if len(page.children) < PAGE_SIZE:
            page.children = (*page.children, part)
            self._page = page
        else:
            self._page = w.VBox([part], layout=self._layout)
            self.box.children = (*self.box.children, self._page)
