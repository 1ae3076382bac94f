"""Markdown in widgets: every model-written text goes through the safe renderer first.

ipywidgets has no Markdown widget; an ``Output`` widget holding one ``text/markdown`` output
uses the frontend's own Markdown renderer (``.jp-RenderedMarkdown``). The text it is given is
the neutralized HTML of :mod:`plan_widgets._render`, never the model's raw text.
"""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as w

from .._render import markdown_bundle, render_html, stable_prefix

FLUSH_INTERVAL = 0.1  # seconds: at most ~10 updates a second per stream


def _output(bundle: dict[str, str]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def markdown_output(src: str, **layout: Any) -> w.Output:
    """An Output widget showing ``src`` as safe Markdown."""
    out = w.Output(layout=w.Layout(**layout)) if layout else w.Output()
    out.outputs = (_output(markdown_bundle(src)),)
    return out


def html_output(safe_html: str) -> w.Output:
    """An Output widget showing HTML that the caller built from escaped parts."""
    out = w.Output()
    set_html(out, safe_html)
    return out


def set_html(out: w.Output, safe_html: str) -> None:
    """Replace the Output's content with caller-built safe HTML (one raw HTML block)."""
    text = "\n".join(line for line in safe_html.splitlines() if line.strip())
    out.outputs = (_output({"text/markdown": text, "text/plain": ""}),)


def set_markdown(out: w.Output, src: str) -> None:
    """Replace the Output's content with ``src`` rendered as safe Markdown."""
    out.outputs = (_output(markdown_bundle(src)),)


class StreamingMarkdown:
    """Streams Markdown into a box: complete blocks are frozen once, only the tail re-renders.

    Updates are coalesced to at most one every ``FLUSH_INTERVAL`` seconds, so a 5,000-delta
    answer costs a few dozen widget messages, and no update resends the whole text.
    """

    def __init__(self, box: w.Box) -> None:
        self.box = box
        self.text = ""
        self._frozen = 0
        self._tail: w.Output | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._last = 0.0
        self.flushes = 0

    def append(self, delta: str) -> None:
        """Add streamed text; the view catches up within ``FLUSH_INTERVAL``."""
        if not delta:
            return
        self.text += delta
        if self._handle is not None:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._last + FLUSH_INTERVAL - loop.time())
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
        pending = self.text[self._frozen :]
        if not pending:
            return
        self.flushes += 1
        cut = stable_prefix(pending)
        new_children: list[w.Widget] = []
        if cut > 0:
            block = w.Output()
            block.outputs = (_output({"text/markdown": render_html(pending[:cut]),
                                      "text/plain": ""}),)
            new_children.append(block)
            self._frozen += cut
            pending = pending[cut:]
        if self._tail is None and pending:
            self._tail = w.Output()
            new_children.append(self._tail)
        if new_children:
            kids = [c for c in self.box.children if c is not self._tail]
            kids.extend(c for c in new_children if c is not self._tail)
            if self._tail is not None:
                kids.append(self._tail)
            self.box.children = tuple(kids)
        if self._tail is not None:
            self._tail.outputs = (
                (_output({"text/markdown": render_html(pending), "text/plain": ""}),)
                if pending else ()
            )
