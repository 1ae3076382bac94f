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

# Seconds between updates of a stream: about 9 a second, so render-time jitter and the cell's
# other updates stay under a budget of 10 a second (docs/benchmarks.md, figure 4).
FLUSH_INTERVAL = 0.11
PAGE_SIZE = 16  # frozen blocks per page (box) of a stream
RENDER_SHARE = 0.25  # at most this share of a stream's time goes to rendering its updates


def _output(bundle: dict[str, str]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def markdown_output(src: str, **layout: Any) -> w.Output:
    """An Output widget showing ``src`` as safe Markdown."""
    out = w.Output(layout=w.Layout(**layout)) if layout else w.Output()
    out.outputs = (_output(markdown_bundle(src)),)
    return out


def html_output(safe_html: str, layout: w.Layout | None = None) -> w.Output:
    """An Output widget showing HTML that the caller built from escaped parts."""
    out = w.Output() if layout is None else w.Output(layout=layout)
    set_html(out, safe_html)
    return out


def set_html(out: w.Output, safe_html: str) -> None:
    """Replace the Output's content with caller-built safe HTML (one raw HTML block).

    It goes through the same last step as rendered Markdown (:func:`html_block`): ``<pre>``
    newlines kept, no blank line, no ``$`` or ``\\`` a math renderer could take for TeX.
    """
    out.outputs = (_output({"text/markdown": html_block(safe_html, "pw-html"),
                            "text/plain": ""}),)


def set_markdown(out: w.Output, src: str) -> None:
    """Replace the Output's content with ``src`` rendered as safe Markdown."""
    out.outputs = (_output(markdown_bundle(src)),)


class StreamingMarkdown:
    """Streams Markdown into a box: complete blocks are frozen once, only the tail re-renders.

    Updates are coalesced to at most one every ``FLUSH_INTERVAL`` seconds, so a 5,000-delta
    answer costs a few dozen widget messages, and no update resends the whole text. Each
    update parses the text not yet frozen once (:func:`render_stream`): the stable prefix and
    both parts' HTML come from the same tokens. A tail that cannot be frozen yet (a long list
    or code block still arriving) is rendered again on each update, so the updates are spaced
    out further when rendering it takes longer: at most a ``RENDER_SHARE`` of the time.
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
        started = time.perf_counter()
        cut, frozen_html, tail_html = render_stream(pending)
        self._interval = max(FLUSH_INTERVAL, (time.perf_counter() - started) / RENDER_SHARE)
        self._shown = len(text)
        new_children: list[w.Widget] = []
        if cut > 0:
            self._html.append(frozen_html)
            block = w.Output(layout=self._layout)
            block.outputs = (_output({"text/markdown": frozen_html, "text/plain": ""}),)
            # Blocks go into pages of PAGE_SIZE, so no update resends a long children list.
            if self._page is not None and len(self._page.children) < PAGE_SIZE:
                self._page.children = (*self._page.children, block)
            else:
                self._page = w.VBox([block], layout=self._layout)
                new_children.append(self._page)
            self._frozen += cut
            pending = pending[cut:]
        if self._tail is None and pending:
            self._tail = w.Output(layout=self._layout)
            new_children.append(self._tail)
        if new_children:
            kids = [c for c in self.box.children if c is not self._tail]
            kids.extend(c for c in new_children if c is not self._tail)
            if self._tail is not None:
                kids.append(self._tail)
            self.box.children = tuple(kids)
        self._tail_html = tail_html
        if self._tail is not None:
            self._tail.outputs = (
                (_output({"text/markdown": tail_html, "text/plain": ""}),) if pending else ()
            )
