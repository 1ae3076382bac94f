"""The agent's task list as a live checklist in its turn: pending, in progress, done.

Task subjects are model text: every one is escaped here, and the HTML reaches the page through
``set_html`` (the safe path's last step).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..agent.checklist import progress
from ..render.look import INFO, MUTED, SUCCESS
from ..render.markdown import escape

_MARK = {"pending": ("☐", MUTED, "pending"), "in_progress": ("◐", INFO, "in progress"),
         "completed": ("☑", SUCCESS, "done")}


def tasks_html(tasks: Iterable[Mapping[str, Any]]) -> str:
    """The checklist as escaped HTML: a count, then one line per task."""
    items = list(tasks)
    done, total = progress(items)
    rows = []
    for t in items:
        status = str(t.get("status", "pending"))
        mark, color, word = _MARK.get(status, ("☐", MUTED, status))
        subject = escape(t.get("subject", ""))
        if status == "completed":
            subject = f'<span style="text-decoration:line-through;color:{MUTED}">{subject}</span>'
        elif status == "in_progress":
            doing = t.get("active_form") or ""
            subject = f"<b>{subject}</b>" + (f" <small>({escape(doing)}…)</small>"
                                             if doing else "")
        rows.append(f'<li style="list-style:none"><span style="color:{color}" '
                    f'title="{escape(word)}">{mark}</span> {subject}</li>')
    return (f'<div class="pw-tasks"><small><b>Tasks {done}/{total}</b></small>'
            f'<ul style="margin:2px 0;padding-left:8px">{"".join(rows)}</ul></div>')


def tasks_markdown(tasks: Iterable[Mapping[str, Any]]) -> str:
    """The checklist as Markdown for the static fallback (a task list, its final state)."""
    items = list(tasks)
    done, total = progress(items)
    lines = [f"**Tasks {done}/{total}**", ""]
    for t in items:
        status = str(t.get("status", "pending"))
        box = "[x]" if status == "completed" else "[ ]"
        extra = " *(in progress)*" if status == "in_progress" else ""
        subject = " ".join(str(t.get("subject", "")).split())
        lines.append(f"- {box} {subject}{extra}")
    return "\n".join(lines)
