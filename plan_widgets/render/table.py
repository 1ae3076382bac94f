"""Tables of plain-text cells: escaped HTML for the page, aligned text for ``text/plain``.

Cells may hold model-written text (prompts, plans); every cell is escaped here, so a caller
passes plain text only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .markdown import NO_MATH, escape

_TH = '<th style="text-align:left">'
_TD = '<td style="text-align:left">'


def table_html(head: Sequence[Any], rows: Sequence[Sequence[Any]], *, cls: str,
               caption: str = "") -> str:
    """``<table class="{cls}">``: an optional caption, a header row, the rows; all escaped."""
    h = "".join(f"{_TH}{escape(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"{_TD}{escape(c)}</td>" for c in r) + "</tr>"
                   for r in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f'<table class="{escape(cls)}">{cap}<tr>{h}</tr>{body}</table>'


def table_text(head: Sequence[Any], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    """The table as aligned columns of text, under its caption."""
    cells = [[str(c) for c in r] for r in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in cells)
    return caption + "\n" + text if caption else text


def table_bundle(head: Sequence[Any], rows: Sequence[Sequence[Any]],
                 caption: str = "") -> dict[str, str]:
    """A display bundle of the table (``text/html`` and ``text/plain``)."""
    # NO_MATH: JupyterLab typesets text/html, and cells hold model text ($HOME ... $X)
    return {"text/html": table_html(head, rows, cls=f"pw-table {NO_MATH}", caption=caption),
            "text/plain": table_text(head, rows, caption)}
