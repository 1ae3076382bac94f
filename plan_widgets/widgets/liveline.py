"""Two things a turn's view does on a bad day (docs/cli.md#bad-day):

- a **live line** at the end of the turn, updated in place (a retry's countdown, "compacting
  the conversation…"), that leaves one quiet line where it was when it is over;
- **a cut message forgotten**: when the CLI retries a stream that broke halfway, what the
  broken attempt showed (since its ``message_start``) goes, so the reply is shown once.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..render.look import WARN
from ..render.markdown import escape, html_block
from .shared import close_tree, look

_LIVE_STYLE = f"color:{WARN}"


def live_html(text: str) -> str:
    return html_block(f'<small class="pw-live" style="{_LIVE_STYLE}">⟳ {escape(text)}</small>',
                      "pw-html")


class LiveLine:
    """The live line of one view (at most one at a time)."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.text = ""
        self._widget: w.HTML | None = None

    def show(self, text: str) -> None:
        v = self.view
        self.text = text
        if v.static:
            v._update_static()
            return
        if self._widget is None:
            self._widget = w.HTML(live_html(text), **look("layout", "html"))
            v._add(self._widget)
        else:
            self._widget.value = live_html(text)

    def done(self, quiet: str | None) -> None:
        """The line is over: gone, and ``quiet`` (if any) said where it was, for good."""
        v = self.view
        widget, self._widget = self._widget, None
        had = bool(self.text)
        self.text = ""
        if widget is not None:
            v.children = tuple(c for c in v.children if c is not widget)
            close_tree([widget])
        if quiet:
            v.marker(quiet)
        elif had and v.static:
            v._update_static()


def mark(view: Any) -> tuple[int, frozenset[int]]:
    """Where a new model message starts in the view: its part count and widgets."""
    view._close_stream()
    return len(view._transcript), frozenset(map(id, view.children))


def drop_since(view: Any, where: tuple[int, frozenset[int]] | None) -> None:
    """Remove every part added since ``where`` (a cut message's text, thinking, tools)."""
    if where is None:
        return
    n, kids = where
    stream, view._stream = view._stream, None
    if stream is not None:
        stream.cancel()
    del view._transcript[n:]
    for table in (view._parts_html, view._decisions):
        for i in [i for i in table if i >= n]:
            del table[i]
    for tid in [t for t, entry in view._tools.items() if entry[1] >= n]:
        del view._tools[tid]
    if view._tasks is not None and view._tasks[0] >= n:
        view._tasks = None
    keep = {id(view._waiting), id(view.live._widget)}
    gone = [c for c in view.children if id(c) not in kids and id(c) not in keep]
    if gone:
        view.children = tuple(c for c in view.children if c not in gone)
        close_tree(gone)
    if view.static:
        view._update_static()
