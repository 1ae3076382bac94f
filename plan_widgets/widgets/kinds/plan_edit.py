"""The plan part of a plan card: the plan, what changed since its last version, and an editor.

- A revised plan (one that follows a plan sent back with Keep planning) opens on **Changes**:
  a diff from the previous version (:mod:`plan_widgets.render.diff`, escaped: both versions
  are model text) with the full plan folded below it; the **Changes** toggle shows the plan
  alone instead.
- **Edit** turns the plan into a text area holding its Markdown; **Preview** renders the edit
  through the safe path; **Discard edit** goes back to the plan as proposed. Approving while
  the editor is open approves the edit (``PlanDecision.approve(plan=...)``): an empty edit is
  refused in one line, an unchanged one approves the plan as proposed. Keep planning from the
  editor sends the feedback only, and the card says the edit was not sent.

The card's head (title and plan) stays one rendered block (:func:`plan_head`, also the static
card's); the editor adds one button (two for a revision) and makes its text area on the first
Edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ...agent.decisions import PlanDecision
from ...render.decision import title_html, wrapping
from ...render.diff import diff_html, diff_markdown
from ...render.look import ERROR, MUTED
from ...render.markdown import SMALL_STYLE, escape, render_html
from ...render.paths import home_short
from ..markdown import set_html
from ..shared import look, on_change, on_click, typed_area
from ..typed import TypedBox
from .plan_comments import comments_html, comments_markdown, revision_notes
from .plan_spares import take

PLAN_TITLE = "Plan proposed: review before anything is edited"
REVISED_TITLE = "Revised plan: review the changes"
EDITED_TITLE = "Plan approved, edited by you"


def _note(text: str) -> str:
    return f'<div><small style="color:{MUTED}">{escape(text)}</small></div>'


def _folded(summary: str, safe_html: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>{safe_html}</details>"


def plan_head(d: PlanDecision, view: str = "auto", draft: str | None = None) -> str:
    """The card's head as safe HTML: its title, then the plan as ``view`` says: ``plan``,
    ``changes`` (the diff from the previous version, the full plan folded), ``edit`` (a note:
    the text area follows), ``preview`` (``draft`` rendered), or ``auto``: what the decision
    calls for (the approved edit, a revision's changes, else the plan)."""
    o = d.outcome
    if view == "auto":
        if d.edited and o is not None and o.plan is not None:
            return wrapping(title_html(EDITED_TITLE) + render_html(o.plan, card=True) + _folded(
                "Your edits to the proposed plan", diff_html(d.plan, o.plan)) + _file(d))
        view = "changes" if d.previous_plan is not None else "plan"
    mine = comments_html(d)  # the user's comments on this plan's lines (plan_comments)
    title = title_html(REVISED_TITLE if d.previous_plan is not None else PLAN_TITLE)
    if view == "changes" and d.previous_plan is not None:
        body = diff_html(d.previous_plan, d.plan, revision_notes(d)) + _folded(
            "The full revised plan", render_html(d.plan, card=True))
    elif view == "edit":
        body = _note("Editing the plan's Markdown below. Approve sends your edit as the "
                     "approved plan; Keep planning sends only your feedback.")
    elif view == "comment":  # the plan line by line follows, with the comments (plan_lines)
        return wrapping(title + _file(d))
    elif view == "preview":
        body = _note("Preview of your edit:") + render_html(draft or "", card=True)
    else:
        body = render_html(d.plan, card=True)
    return wrapping(title + body + mine + _file(d))


def _file(d: PlanDecision) -> str:
    if not d.plan_file:
        return ""
    path = escape(home_short(d.plan_file))
    return f'<div style="{SMALL_STYLE}">Plan file: <code>{path}</code></div>'


def plan_markdown(d: PlanDecision) -> list[str]:
    """A plan decision's lines for the text fallback: the edited text once approved (with the
    edits as a unified diff), a revision's unified diff before its text, else the plan."""
    o = d.outcome
    if d.edited and o is not None and o.plan is not None:
        return [f"**{EDITED_TITLE}**", "", o.plan, "", "Your edits to the proposed plan:", "",
                diff_markdown(d.plan, o.plan, "proposed plan", "approved plan")]
    notes = [f"- On “{c.quote}” ({'changed' if hit else 'not changed'} by this revision): "
             f"{c.note}" for c, hit in d.previous_comments()]
    mine = comments_markdown(d)
    if d.previous_plan is not None:
        return ["**Revised plan proposed**", "", "Changes from the previous plan:", "",
                diff_markdown(d.previous_plan, d.plan), *(["", "Your comments on it:", *notes]
                                                          if notes else []), "", d.plan,
                *(["", *mine] if mine else [])]
    return ["**Plan proposed**", "", d.plan, *(["", *mine] if mine else [])]


class PlanEditor:
    """The plan's view and editor on a :class:`~.plan.PlanCard` (see the module's doc):
    ``controls`` go into the card after its ``head``; Approve and Keep planning go through
    :meth:`approve` and :meth:`keep`."""

    def __init__(self, card: Any, decision: PlanDecision, head: w.Output) -> None:
        self.card = card
        self.d = decision
        self.head = head
        self.mode = "changes" if decision.previous_plan is not None else "plan"
        self.edit_button: w.Button = take("edit", decision.resting_mode)  # (plan_spares)
        on_click(self.edit_button, lambda _b: self.open_editor())
        self.changes_button: w.ToggleButton | None = None
        if decision.previous_plan is not None:
            self.changes_button = w.ToggleButton(
                value=True, description="Changes", icon="exchange",
                tooltip="The changes from the previous plan, or the full plan",
                **look("auto", "toggle"))
            on_change(self.changes_button, self._on_changes, "value")
        self.controls: list[w.Widget] = [b for b in (self.changes_button, self.edit_button) if b]
        self.text: TypedBox | None = None
        self.preview_button: w.ToggleButton | None = None
        self.discard_button: w.Button | None = None
        self.on_show: Callable[[], object] = lambda: None
        """Called before the head changes view (the card closes its line view: plan_lines)."""
        self.commenting = False
        """The plan shows line by line below the head (plan_lines): the head is its title."""
        decision.watch(self._on_decided)

    # -- the card's actions ------------------------------------------------------------------
    @property
    def editing(self) -> bool:
        return self.mode in ("edit", "preview")

    @property
    def draft(self) -> str | None:
        """The text in the editor (None unless it is open)."""
        return self.text.value if self.text is not None and self.editing else None

    def approve(self, mode: str | None = None, only: bool = False, *, fresh: bool = False
                ) -> bool:
        """Approve: the edit if the editor is open, else the plan as proposed (``fresh``: in a
        new conversation, agent/handoff; ``only``: ``mode`` for this plan only)."""
        how = self.d.approve_fresh if fresh else self.d.approve
        try:
            return how(mode, plan=self.draft, by="user", only=only)
        except ValueError as e:  # an empty edit: one line on the card, nothing decided
            msg = str(e)[:1].upper() + str(e)[1:]
            self.card.set_status(f'<span style="color:{ERROR}">{escape(msg)}.</span>')
            return False

    def keep(self, feedback: str) -> bool:
        """Keep planning with ``feedback``; an open edit is not sent (the card says so)."""
        return self.d.reject(feedback, by="user", unsent_edit=self.draft)

    # -- views -------------------------------------------------------------------------------
    def open_editor(self) -> None:
        if self.d.done or self.editing:
            return
        if self.text is None:
            rows = min(30, max(6, self.d.plan.count("\n") + 2))
            self.text = typed_area(value=self.d.plan, rows=rows, _dom_classes=("pw-plan-edit",))
            self.preview_button = w.ToggleButton(description="Preview", icon="eye",
                                                 tooltip="Show your edit rendered",
                                                 **look("auto", "toggle"))
            on_change(self.preview_button, self._on_preview, "value")
            self.discard_button = w.Button(description="Discard edit", icon="undo",
                                           tooltip="Back to the plan as proposed",
                                           **look("auto", "button"))
            on_click(self.discard_button, lambda _b: self.discard())
        else:
            self.text.value = self.d.plan
        self._show("edit")

    def discard(self) -> None:
        if not self.d.done:
            self._show("changes" if self.d.previous_plan is not None else "plan")

    def _on_changes(self, change: dict[str, Any]) -> None:
        if not self.editing and not self.d.done:
            self._show("changes" if change["new"] else "plan")

    def _on_preview(self, change: dict[str, Any]) -> None:
        if self.editing and not self.d.done:
            self._show("preview" if change["new"] else "edit")

    def show_head(self, view: str | None = None) -> None:
        """The head alone in ``view`` (None: the editor's own view again)."""
        set_html(self.head, plan_head(self.d, view or ("comment" if self.commenting
                                                       else self.mode)))

    def _show(self, mode: str) -> None:
        """Show the head as ``mode`` says, and the editor's widgets while it is open."""
        self.on_show()
        self.mode = mode
        set_html(self.head, plan_head(self.d, mode, self.draft if mode == "preview" else None))
        if self.preview_button is not None and mode != "preview":
            self.preview_button.value = False
        editor: list[w.Widget] = []
        if mode == "edit" and self.text is not None:
            editor = [self.text]
        if self.editing and self.preview_button is not None and self.discard_button:
            editor += [self.preview_button, self.discard_button]
        row = editor or self.controls
        kids = [c for c in self.card.children if c not in (
            *self.controls, self.text, self.preview_button, self.discard_button)]
        at = kids.index(self.head) + 1
        self.card.children = (*kids[:at], *row, *kids[at:])

    def _on_decided(self) -> None:
        """Decided (by anyone): the editor closes, and the head shows what was decided."""
        if self.editing or self.d.edited:
            self.mode = "decided"
            kids = [c for c in self.card.children
                    if c not in (self.text, self.preview_button, self.discard_button)]
            at = kids.index(self.head) + 1
            self.card.children = (*kids[:at], *self.controls, *[
                c for c in kids[at:] if c not in self.controls])
        set_html(self.head, plan_head(self.d, "comment" if self.commenting and not self.d.done
                                      else "auto"))
