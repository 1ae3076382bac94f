"""Comments on a plan's lines, made by clicking the line (issue 22, point 2; issue 31, point 5;
the rules in :mod:`plan_widgets.agent.comments`).

The card gets one button, **Comment on a line**. Its first click turns the plan into its lines,
rendered one per row (:func:`~plan_widgets.render.markdown.plan_line_views`), each a checkbox
whose description is the line, its box hidden: a click on a line (or Space on it) picks it, and
a note field with **Add comment** and **Cancel** opens right below it. Each comment stands below
its line with **Edit comment** (its text back in the field; **Save comment** replaces it) and
**Remove comment**. **Done commenting** shows the rendered plan again, with the comments listed
below it. So a card costs one widget model more, not more, until someone comments (the card's
latency is measured in ``python -m benchmarks``).

Why checkboxes: stock ipywidgets has no clickable HTML; a checkbox's description may be HTML
(inline only: the frontend's sanitizer keeps ``b``, ``code``, ``em``, ``strong``, ``span``,
lists, links) and its label is a click target the keyboard reaches too. :data:`LINE_CSS`, a
trusted ``<style>`` scoped to the class ``pw-plan-line``, makes each a plain line of the plan
with a highlight under the mouse, on focus and when picked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ...agent.comments import CommentError, PlanComment, make_comment
from ...agent.decisions import PlanDecision
from ...render.look import ERROR, LINE_HOVER, LINE_MARK, LINE_PICKED
from ...render.look import HINT as HINT_COLOR
from ...render.markdown import SMALL_STYLE, escape, html_block, plan_line_views
from ..shared import close_tree, look, on_change, on_click, shared, typed_area
from ..typed import TypedBox
from .plan_comments import NOTE_STYLE
from .plan_spares import take

LINE_CSS = (
    "<style>"
    ".pw-plan-line.widget-checkbox{height:auto;margin:0;width:auto}"
    ".pw-plan-line label{display:block;box-sizing:border-box;width:100%;height:auto;"
    "line-height:1.5;cursor:pointer;"
    "white-space:normal;overflow-wrap:break-word;padding:1px 6px;margin:0;"
    "border-left:3px solid transparent;border-radius:3px}"
    ".pw-plan-line label>span{white-space:normal;overflow:visible;text-overflow:clip}"
    ".pw-plan-line input{position:absolute;opacity:0;width:1px;height:1px;margin:0}"
    f".pw-plan-line label:hover,.pw-plan-line label:focus-within{{{LINE_HOVER}}}"
    f".pw-plan-line label:has(input:checked){{{LINE_PICKED};border-left-color:{LINE_MARK}}}"
    "</style>"
)
HINT = ("Click a line to comment on it (a heading: its section). Keep planning sends each "
        "comment with its line.")


class CommentBox:
    """The comment controls of a :class:`~.plan.PlanCard` (see the module's doc)."""

    def __init__(self, card: Any, decision: PlanDecision) -> None:
        self.card = card
        self.d = decision
        self.open_button: w.Button = take("comment", decision.resting_mode)  # (plan_spares)
        on_click(self.open_button, lambda _b: self.toggle())
        self.controls: list[w.Widget] = [self.open_button]
        self.view: w.VBox | None = None
        self.rows: dict[int, w.Checkbox] = {}
        self.note: TypedBox | None = None
        self.form: w.VBox | None = None
        self.add_button: w.Button | None = None
        self.picked: int | None = None
        self.editing: PlanComment | None = None
        self.shown = False
        self._notes: dict[PlanComment, w.HBox] = {}
        self._quiet = False
        decision.watch(self._on_change)

    # -- the line view ---------------------------------------------------------------------
    def toggle(self) -> None:
        if self.shown:
            self.close()
        else:
            self.open()

    def open(self) -> None:
        """Show the plan line by line in place of the rendered plan (made on the first open)."""
        if self.d.done or self.shown:
            return
        editor = self.card.editor
        if editor.editing:
            editor.discard()
        if self.view is None:
            self._build()
        assert self.view is not None
        self.shown = editor.commenting = True
        self.open_button.description = "Done commenting"
        editor.show_head()
        kids = list(self.card.children)
        at = kids.index(editor.head) + 1
        self.card.children = (*kids[:at], self.view, *kids[at:])
        self._layout()

    def close(self, redraw: bool = True) -> None:
        """Back to the rendered plan (its comments listed below it)."""
        if not self.shown:
            return
        self.shown = self.card.editor.commenting = False
        self.open_button.description = "Comment on a line"
        self.card.children = tuple(c for c in self.card.children if c is not self.view)
        if redraw:
            self.card.editor.show_head()

    def _build(self) -> None:
        hint = w.HTML(html_block(f'{LINE_CSS}<div style="{SMALL_STYLE};color:{HINT_COLOR}">'
                                 f"{escape(HINT)}</div>", "pw-html"), **look("full", "html"))
        for n, html in plan_line_views(self.d.plan):
            row = w.Checkbox(value=False, indent=False, description_allow_html=True,
                             description=html, _dom_classes=("pw-plan-line",),
                             **look("option", "checkbox"))
            on_change(row, self._on_line(n), "value")
            self.rows[n] = row
        self.note = typed_area(placeholder="Your comment on this line (what should change?)",
                               rows=2, _dom_classes=("pw-comment-text",))
        self.add_button = w.Button(description="Add comment", icon="plus",
                                   button_style="primary", **look("auto", "button-primary"))
        on_click(self.add_button, lambda _b: self.add())
        cancel = w.Button(description="Cancel", icon="times", **look("auto", "button"))
        on_click(cancel, lambda _b: self._pick(None))
        self.form = w.VBox([self.note, w.HBox([self.add_button, cancel])],
                           layout=w.Layout(margin="0 0 4px 2em", width="calc(100% - 2em)"))
        self.view = w.VBox([hint], layout=w.Layout(flex="1 1 100%", min_width="0",
                                                   margin="0 0 4px 0"),
                           _dom_classes=("pw-plan-lines",))

    def _layout(self) -> None:
        """The view's rows: each line, the comments on it below it, the open form below its
        line."""
        if self.view is None:
            return
        by_line: dict[int, list[w.Widget]] = {}
        for c in self.d.comments:
            by_line.setdefault(c.line, []).append(self._note_row(c))
        for gone in [c for c in self._notes if c not in self.d.comments]:
            close_tree([self._notes.pop(gone)])
        kids: list[w.Widget] = [self.view.children[0]]
        for n, row in self.rows.items():
            kids.append(row)
            kids.extend(by_line.get(n, []))
            if n == self.picked and self.form is not None:
                kids.append(self.form)
        self.view.children = tuple(kids)

    def _note_row(self, c: PlanComment) -> w.HBox:
        row = self._notes.get(c)
        if row is None:
            text = w.HTML(html_block(f'<span class="pw-comment-note" style="{NOTE_STYLE}">'
                                     f"<b>Your comment:</b> {escape(c.note)}</span>", "pw-html"),
                          **look("full", "html"))
            edit = w.Button(description="Edit comment", icon="edit", **look("auto", "button"))
            on_click(edit, lambda _b: self.edit(c))
            drop = w.Button(description="Remove comment", icon="trash",
                            **look("auto", "button"))
            on_click(drop, lambda _b: self.remove(c))
            row = self._notes[c] = w.HBox([text, edit, drop], layout=shared("bar"),
                                          _dom_classes=("pw-comment-row",))
        return row

    # -- picking a line, adding, editing, removing -------------------------------------------
    def _on_line(self, n: int) -> Callable[[dict[str, Any]], None]:
        return lambda change: self._clicked(n, change["new"])

    def _clicked(self, n: int, value: bool) -> None:
        if self._quiet or self.d.done:
            return
        self._pick(n if value else None)

    def _pick(self, n: int | None) -> None:
        """Pick line ``n`` (None: none): its row highlighted, the form below it."""
        if n is None or (self.editing is not None and self.editing.line != n):
            self.editing = None
        self.picked = n
        self._quiet = True
        try:
            for m, row in self.rows.items():
                row.value = m == n
        finally:
            self._quiet = False
        if self.add_button is not None:
            self.add_button.description = "Save comment" if self.editing else "Add comment"
        if n is None and self.note is not None:
            self.note.value = ""
        self._layout()

    def add(self) -> PlanComment | None:
        """Add the comment typed on the picked line (or save the one edited); bad input is one
        line on the card, and the text stays."""
        if self.note is None or self.picked is None:
            self._say("Click a line of the plan first, then write your comment")
            return None
        old = self.editing
        try:  # checked whole before anything changes (an edit must not lose the old comment)
            make_comment(self.d.plan, self.picked, self.note.value,
                         len(self.d.comments) - (old is not None))
            if old is not None:
                self.d.uncomment(old)
            c = self.d.comment(self.picked, self.note.value)
        except CommentError as e:
            self._say(str(e))
            return None
        self.editing = None
        self._pick(None)
        return c

    def edit(self, c: PlanComment) -> None:
        """Its text back in the field below its line; Save comment replaces it."""
        if self.d.done or c not in self.d.comments or self.note is None:
            return
        self.editing = c
        self._pick(c.line)
        self.note.value = c.note

    def remove(self, c: PlanComment) -> None:
        if self.editing is c:
            self._pick(None)
        self.d.uncomment(c)

    def flush(self) -> bool:
        """Before Keep planning: a comment typed but not added is added first. False (and one
        line on the card, the text kept) if it cannot be: then nothing is sent."""
        if self.note is None or self.picked is None or not self.note.value.strip():
            return True
        return self.add() is not None

    def _say(self, msg: str) -> None:
        msg = msg[:1].upper() + msg[1:]
        self.card.set_status(f'<span style="color:{ERROR}">{escape(msg)}.</span>')

    def _on_change(self) -> None:
        if self.d.done:  # the editor shows what was decided; the line view goes
            self.close(redraw=False)
            self.open_button.disabled = True
            # out of the card's tree now, so closed here (the card closes only its tree)
            close_tree([x for x in (self.view, self.form, *self._notes.values()) if x])
            self.view = self.form = None
            self._notes.clear()
        elif self.shown:
            self._layout()

