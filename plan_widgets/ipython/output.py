"""What the IPython layer shows besides a turn: tables, widgets, Markdown; with widgets in a
Jupyter kernel, as text in terminal IPython.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from IPython.display import display

from ..render.markdown import escape, markdown_bundle
from ..render.table import table_bundle


def in_kernel() -> bool:
    """Whether we run in a Jupyter kernel (widgets possible), not terminal IPython."""
    from IPython import get_ipython

    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def show_table(head: Sequence[Any], rows: Sequence[Sequence[Any]], caption: str = "") -> None:
    """Display a table of plain-text cells: escaped HTML for the page, aligned text for
    text/plain."""
    display(table_bundle(head, rows, caption), raw=True)


def show_markdown(head: str, src: str) -> None:
    """A bold heading line and model-written Markdown (the safe render path); as text when
    there is no page."""
    if in_kernel():
        display({"text/html": f"<b>{escape(head)}</b>", "text/plain": head}, raw=True)
        display(markdown_bundle(src), raw=True)
    else:
        print(head)
        print(src)


def show_widget(widget: Any, text: str, **more: str) -> None:
    """Display a widget, with ``text`` where widgets do not show (a saved notebook's text;
    ``more``: other fallbacks, ``text_html=...``)."""
    from ..widgets.shared import widget_bundle

    display(widget_bundle(widget, text_plain=text, **more), raw=True)


def show(obj: Any) -> None:
    """Display an object (a widget) as IPython would."""
    display(obj)
