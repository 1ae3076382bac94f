"""A read-only view of a session's past: its turns, and its plans and other decisions.

Shown when a session is resumed. Nothing in it can be answered (no buttons); plans render
through the safe Markdown path, everything else is escaped text.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ..render.history import TURN_HEAD, decision_status, turn_rows, when
from ..render.markdown import escape, summarize
from ..render.table import table_html
from .markdown import html_output, markdown_output

_COLOR = {"approved": "#047857", "expired": "#b91c1c"}
_GREY = "#6b7280"


def history_widget(events: list[Any], st: Any) -> w.VBox:
    """The turns as a table, then one box per decision (``st`` is the folded state)."""
    parts: list[Any] = []
    rows = turn_rows(events)
    if rows:
        parts.append(html_output(table_html(TURN_HEAD, rows, cls="pw-history")))
    parts.extend(decision_box(d) for d in st.decisions.values())
    if not parts:
        parts.append(w.HTML("<i>No turns yet.</i>"))
    out = w.VBox(parts)
    out.add_class("pw-history")
    return out


def decision_box(d: Any) -> w.VBox:
    """One past decision: what was asked, and how it ended."""
    color = _COLOR.get(d.status, _GREY)
    title = {"plan": "Plan", "question": "Questions", "tool": f"Tool {d.tool or ''}"}[d.kind]
    status = w.HTML(
        f'<span class="pw-history-status" style="color:{color}"><b>{escape(title)} '
        f"{escape(d.id)}</b> (turn {d.turn}, asked {escape(when(d.ts_asked, '%H:%M:%S'))}):"
        f" <b>{escape(decision_status(d))}</b></span>"
    )
    box = w.VBox([status, _asked(d)], layout=w.Layout(border=f"1px dashed {color}",
                                                      padding="4px 8px", margin="4px 0"))
    box.add_class("pw-history-decision")
    return box


def _asked(d: Any) -> w.DOMWidget:
    if d.kind == "plan":
        return markdown_output(d.plan or "")
    if d.kind == "question":
        text = "; ".join(str(q.get("question", "")) for q in d.questions)
        if d.answers:
            text += " → " + "; ".join(f"{k} = {v}" for k, v in d.answers.items())
        if d.notes:
            text += " (notes: " + "; ".join(f"{k}: {v}" for k, v in d.notes.items()) + ")"
        return w.HTML(f"<span>{escape(summarize(text, 300))}</span>")
    return w.HTML(f"<code>{escape(summarize(dict(d.input or {}), 300))}</code>")
