"""Comments on a plan's lines, on its card (issue 22, point 2; the rules in
:mod:`plan_widgets.agent.comments`).

The card gets one button, **Comment on a line**; the first click opens the line picker (the
plan's lines with text, numbered), a note field and **Add comment**. So a card costs one widget
model more, not four, until someone comments (the card's latency is measured in
``python -m benchmarks``). The comments show as one rendered list on the card and in its static
copy; a revision's Changes view shows each comment right below the line it was about, saying
whether the revision changed that line.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ...agent.comments import CommentError, PlanComment, plan_lines
from ...agent.decisions import PlanDecision
from ...render.markdown import SMALL_STYLE, escape
from ..shared import look, on_click, typed_area

_NOTE_STYLE = ("display:block;white-space:normal;word-break:normal;overflow-wrap:break-word;"
               "margin:2px 0 6px 2.2em;padding:3px 8px;"
               "border-left:3px solid #6366f1;background:#eef2ff;font-family:var(--jp-ui-font-"
               "family,sans-serif);font-size:0.95em")


def _where(c: PlanComment) -> str:
    return f"Section “{c.quote.lstrip('#').strip()}”" if c.section else f"Line {c.line}"


def comments_html(d: PlanDecision) -> str:
    """The plan's own comments as safe HTML (empty when it has none)."""
    if not d.comments:
        return ""
    sent = d.outcome is not None and d.outcome.status == "rejected"
    head = "Your comments (sent with Keep planning)" if sent else "Your comments"
    items = "".join(
        f'<li class="pw-comment"><b>{escape(_where(c))}</b>: <q>{escape(c.quote)}</q><br>'
        f"{escape(c.note)}</li>" for c in sorted(d.comments, key=lambda c: c.line))
    return (f'<div class="pw-comments" style="margin:6px 0"><div style="{SMALL_STYLE}">'
            f'{escape(head)}</div><ul style="margin:2px 0 4px 0;padding-left:1.4em">{items}'
            "</ul></div>")


def revision_notes(d: PlanDecision) -> dict[int, str]:
    """For a revision's Changes view: each comment on the previous plan as safe HTML, keyed
    by the previous plan's line it was about, saying whether this revision changed it."""
    out: dict[int, str] = {}
    for c, hit in d.previous_comments():
        state = ("changed by this revision" if hit else "not changed by this revision")
        color = "#047857" if hit else "#b45309"
        out[c.line] = out.get(c.line, "") + (
            f'<span class="pw-comment-note" style="{_NOTE_STYLE}"><b>Your comment:</b> '
            f'{escape(c.note)} '
            f'<small style="color:{color}">({escape(state)})</small></span>')
    return out


def comments_markdown(d: PlanDecision) -> list[str]:
    """The comments as text lines (the text fallback and the terminal)."""
    lines: list[str] = []
    for c in sorted(d.comments, key=lambda c: c.line):
        lines.append(f"- {_where(c)}: > {c.quote}\n  {c.note}")
    return ["Your comments:", "", *lines] if lines else []


def line_choices(plan: str) -> list[tuple[str, int]]:
    """The picker's options: each line with text, numbered, shortened to fit."""
    out = []
    for n, ln in enumerate(plan_lines(plan), 1):
        text = " ".join(ln.split())
        if text:
            out.append((f"{n}: {text[:70] + '…' if len(text) > 71 else text}", n))
    return out


class CommentBox:
    """The comment controls of a :class:`~.plan.PlanCard` (see the module's doc)."""

    def __init__(self, card: Any, decision: PlanDecision) -> None:
        self.card = card
        self.d = decision
        self.open_button = w.Button(description="Comment on a line", icon="comment",
                                    tooltip="Attach a comment to a line or a section of the "
                                    "plan; Keep planning sends it with the line",
                                    **look("auto", "button"))
        on_click(self.open_button, lambda _b: self.open())
        self.controls: list[w.Widget] = [self.open_button]
        self.picker: w.Dropdown | None = None
        self.note: w.Textarea | None = None
        self.add_button: w.Button | None = None
        decision.watch(self._on_change)

    def open(self) -> None:
        """Show the line picker, the note field and Add comment (made on the first click)."""
        if self.d.done or self.picker is not None:
            return
        self.picker = w.Dropdown(options=line_choices(self.d.plan), description="Line",
                                 _dom_classes=("pw-comment-line",), **look("full", "radio"))
        self.note = typed_area(placeholder="Your comment on this line (what should change?)",
                               rows=2, _dom_classes=("pw-comment-text",))
        self.add_button = w.Button(description="Add comment", icon="plus",
                                   button_style="primary", **look("auto", "button"))
        on_click(self.add_button, lambda _b: self.add())
        kids = list(self.card.children)
        at = kids.index(self.open_button) + 1
        self.card.children = (*kids[:at], self.picker, self.note, self.add_button, *kids[at:])

    def add(self) -> PlanComment | None:
        """Add the comment typed; bad input is one line on the card, and the text stays."""
        if self.picker is None or self.note is None:
            return None
        try:
            c = self.d.comment(self.picker.value or 0, self.note.value)
        except CommentError as e:
            msg = str(e)[:1].upper() + str(e)[1:]
            self.card.set_status(f'<span style="color:#b91c1c">{escape(msg)}.</span>')
            return None
        self.note.value = ""
        return c

    def flush(self) -> bool:
        """Before Keep planning: a comment typed but not added is added first. False (and one
        line on the card, the text kept) if it cannot be: then nothing is sent."""
        if self.note is None or not self.note.value.strip():
            return True
        return self.add() is not None

    def _on_change(self) -> None:
        if self.d.done:
            for c in (self.open_button, self.picker, self.note, self.add_button):
                if c is not None:
                    c.disabled = True
