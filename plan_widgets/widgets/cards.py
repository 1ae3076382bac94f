"""Decision cards: a plan to approve, questions to answer, a tool to allow.

A card's buttons call the decision's methods (``approve``, ``reject``, ``answer``, ``allow``,
``deny``) with ``by="user"``; once the decision is made by anyone, the card shows the outcome
and disables itself. Every model-written text on a card is rendered by the safe path.

A card is made of the widgets a user acts on (buttons, fields, choices) and as few others as
possible: what it shows (title, plan, tool input) is one rendered block, its status one line.
:func:`~.static.card_html` is the same card as static HTML, with its outcome: what a finished
turn leaves in the notebook (no widget models behind it).
"""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as w
from IPython.display import display

from ..agent.decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from ..render.markdown import escape, html_block, inline_no_math
from .markdown import html_output
from .plan_comments import CommentBox
from .plan_edit import PlanEditor
from .plan_targets import into, target_picker
from .shared import close_tree, look, shared, widget_bundle
from .static import (
    QUESTION_TITLE,
    _option_text,
    _options,
    _plan_head,
    _question_head,
    _title,
    _tool_head,
    _tool_preview,
    _wrapping,
    asker,
    asker_html,
    card_html,
    decision_markdown,
    status_html,
    suggestion_text,
)

__all__ = ["Card", "PlanCard", "QuestionCard", "ToolCard", "card_for", "card_html",
           "decision_markdown", "show_card", "status_html", "suggestion_text", "_tool_preview"]

class Card(w.Box):
    """Common frame: the card's widgets, then its status line (the last child)."""

    def __init__(self, decision: Decision, controls: list[w.Widget]) -> None:
        self.decision = decision
        self.status = w.HTML(**look("full", "html"), _dom_classes=("pw-card-status",))
        self._handle: Any = None  # a display of its own (show_card), else part of a turn's
        self._closed = False
        if asker(decision):  # a subagent asks: the card names it first
            controls = [w.HTML(html_block(asker_html(decision), "pw-html"),
                               **look("full", "html")), *controls]
        super().__init__(
            [*controls, self.status], layout=shared(f"card-{decision.kind}"),
            _dom_classes=("pw-card", f"pw-card-{decision.kind}"),
        )
        decision.watch(self.refresh)
        self.refresh()

    def _inputs(self) -> list[w.Widget]:
        return [c for c in self.children if c.has_trait("disabled")]

    def refresh(self) -> None:
        """Show the decision's state; disable every control once it is made."""
        if self._closed:  # static now; a late change (superseded) still reaches its display
            if self._handle is not None:
                self._show_static()
            return
        d = self.decision
        if d.outcome is not None:
            for c in self._inputs():
                c.disabled = True
        self.set_status(status_html(d))
        if d.outcome is not None and self._handle is not None:
            _soon(self.make_static)

    def set_status(self, safe_html: str) -> None:
        self.status.value = html_block(_lines(safe_html), "pw-status")

    def mimebundle(self) -> dict[str, Any]:
        """The card's display bundle: the widget, and the static card for other frontends."""
        return widget_bundle(self, text_markdown=card_html(self.decision),
                             text_plain=decision_markdown(self.decision))

    def make_static(self) -> None:
        """Replace the card's own display with the static card, and close its widget models."""
        if self._closed:
            return
        self._show_static()
        self.close_models()

    def _show_static(self) -> None:
        try:
            self._handle.update({"text/markdown": card_html(self.decision),
                                 "text/plain": decision_markdown(self.decision)}, raw=True)
        except Exception:  # a closed frontend channel must not break the decision
            pass

    def close_models(self) -> None:
        """Close this card's widget models (its display must no longer show them)."""
        self._closed = True
        close_tree([self])


def _lines(safe_html: str) -> str:
    """Text in an HTML widget, with a line height of its own: the widget's (28 px, to line up
    with buttons) made text that wraps look double-spaced."""
    return f'<div style="line-height:1.45">{safe_html}</div>'


def _soon(fn: Any) -> None:
    """Run ``fn`` after the current callback (a card is not closed inside its own click)."""
    try:
        asyncio.get_running_loop().call_soon(fn)
    except RuntimeError:
        fn()


def show_card(decision: Decision) -> Card:
    """Display ``decision``'s card in the current cell, on a display of its own; once the
    decision is made, that display becomes the static card and the widgets close."""
    card = card_for(decision)
    card._handle = display(card.mimebundle(), raw=True, display_id=True)
    if decision.done:
        card.make_static()
    return card


class PlanCard(Card):
    """The plan as Markdown, with Approve / Approve, auto-accept edits / Keep planning."""

    def __init__(self, decision: PlanDecision) -> None:
        head = html_output(_plan_head(decision), layout=shared("full"))
        self.editor = PlanEditor(self, decision, head)  # Changes, Edit (widgets/plan_edit)
        self.comments = CommentBox(self, decision)  # comments on lines (plan_comments)
        self.feedback = w.Textarea(placeholder="What should change? (feedback for the agent)",
                                   rows=3, **look("full", "text"))
        self.target = target_picker(decision)  # where Approve leads (plan_targets)
        self.approve_button = w.Button(description="Approve", button_style="success",
                                       icon="check", tooltip=into(self.target.value),
                                       **look("auto", "button"))
        self.target.observe(lambda ch: setattr(self.approve_button, "tooltip", into(ch["new"])),
                            "value")
        self.approve_edits_button: w.Button | None = None
        if decision.resting_mode != "acceptEdits":
            self.approve_edits_button = w.Button(
                description="Approve, auto-accept edits", button_style="info",
                icon="check-double", **look("auto", "button"))
            self.approve_edits_button.on_click(lambda _b: self.editor.approve("acceptEdits"))
        self.fresh_button = w.Button(  # agent/handoff: the plan opens a new conversation
            description="Approve, start fresh", button_style="success", icon="refresh",
            tooltip="Run the plan in a new conversation (the planning context is dropped)",
            **look("auto", "button"))
        self.fresh_button.on_click(lambda _b: self.editor.approve(self.target.value, fresh=True))
        self.keep_button = w.Button(description="Keep planning", button_style="warning",
                                    icon="pencil", **look("auto", "button"))
        self.approve_button.on_click(lambda _b: self.editor.approve(self.target.value))
        self.keep_button.on_click(  # a comment typed and not yet added goes too, or nothing
            lambda _b: self.comments.flush() and self.editor.keep(self.feedback.value))
        buttons = [self.approve_button, self.target, self.approve_edits_button,
                   self.fresh_button, self.keep_button]
        super().__init__(decision, [head, *self.editor.controls, *self.comments.controls,
                                    self.feedback,
                                    *[b for b in buttons if b]])


class QuestionCard(Card):
    """Each question once: its options with their descriptions beside them (radio buttons for
    a single choice, a checkbox each for several), an Other field and a Notes field; then
    Submit.

    A single choice is one ``RadioButtons`` (one widget model for all its options, nothing
    picked until the user clicks). Its option labels are text nodes (``textContent``: never
    HTML, never typeset as math; checked in the browser with ``$HOME and $PATH`` and ``\\(x\\)``)
    but ipywidgets' CSS gives each one line 20 px high: a description that wraps ran over the
    next option (measured in JupyterLab at 800 px: a label's text 40 px high in 20 px). So the
    card's first HTML widget carries :data:`_RADIO_CSS`, a trusted ``<style>`` scoped to the
    class ``pw-radio`` of the card's radio groups: each label grows with its text and is a grid
    of the radio and the text, which wraps beside it, the radio level with its first line.
    tests/test_browser_cards.py measures this in JupyterLab 4 and Notebook 7 (Chromium) at 800
    and 1,400 px: no text runs into the next option or out of its label, each radio is
    visible, left of its text and level with its first line. A multi-select question's
    checkbox descriptions are HTML, so they wrap (see :func:`_checkbox`)."""

    def __init__(self, decision: QuestionDecision) -> None:
        self._pickers: list[tuple[dict[str, Any], w.RadioButtons | list[tuple[str, w.Checkbox]],
                                  w.Text, w.Text]] = []
        self._warned: frozenset[str] | None = None
        controls: list[w.Widget] = []
        radios = any(not q.get("multiSelect") for q in decision.questions)
        for i, q in enumerate(decision.questions):
            multi = bool(q.get("multiSelect"))
            hint = ' <span style="color:#6b7280">(pick any)</span>' if multi else ""
            title = (_RADIO_CSS if radios else "") + _title(QUESTION_TITLE)
            head = (title if i == 0 else "") + _question_head(q, hint)
            controls.append(w.HTML(html_block(_lines(_wrapping(head)), "pw-html"),
                                   **look("full", "html")))
            picker: w.RadioButtons | list[tuple[str, w.Checkbox]]
            if multi:
                picker = [(str(o.get("label", "")), _checkbox(o)) for o in _options(q)]
                controls.extend(box for _label, box in picker)
            else:
                picker = _radio(q)
                controls.append(picker)
            other = w.Text(placeholder="Other (free text)", **look("half", "text"))
            notes = w.Text(placeholder="Notes for the agent (optional)", **look("half", "text"))
            controls.extend([other, notes])
            self._pickers.append((q, picker, other, notes))
        self.submit_button = w.Button(description="Submit", button_style="primary", icon="reply",
                                      **look("auto", "button"))
        self.submit_button.on_click(lambda _b: self._submit())
        super().__init__(decision, [*controls, self.submit_button])

    def _submit(self) -> None:
        answers: dict[str, str | list[str]] = {}
        notes: dict[str, str] = {}
        missing: list[str] = []
        for q, picker, other, note in self._pickers:
            text = str(q.get("question", ""))
            if isinstance(picker, w.RadioButtons):
                chosen = [] if picker.index is None else [picker.value]
            else:
                chosen = [label for label, box in picker if box.value]
            if other.value.strip():
                chosen.append(other.value.strip())
            if chosen:
                answers[text] = chosen
            else:
                missing.append(str(q.get("header") or text))
            if note.value.strip():
                notes[text] = note.value.strip()
        d = self.decision
        assert isinstance(d, QuestionDecision)
        if not answers:
            self.set_status('<span style="color:#b91c1c">Pick an option or write one.</span>')
            return
        if missing and self._warned != frozenset(missing):
            # as Claude Code's own review step: say what is unanswered, send on a second Submit
            self._warned = frozenset(missing)
            self.set_status(
                '<span style="color:#b45309">Not answered yet: '
                f"{escape(', '.join(missing))}. Press Submit again to send as it is.</span>"
            )
            return
        d.answer(answers, notes=notes, by="user")


# A radio option's label in ipywidgets' CSS is one line 20 px high (its radio floats left of
# it): here it grows with its text, a grid of the radio and the text beside it, the text
# wrapping (a long word too), the radio centred on the first line (line height 1.4 = 18.2 px
# at the widgets' 13 px, a 13 px radio). Trusted, and scoped to the class of the cards' own
# radio groups. It must have no "$" or backslash: html_block writes those as character
# references, which a <style> element's text does not decode.
_RADIO_CSS = (
    "<style>"
    ".pw-radio.widget-radio{height:auto;line-height:normal}"
    ".pw-radio .widget-radio-box{margin-bottom:0}"
    ".pw-radio .widget-radio-box label{height:auto;line-height:1.4;white-space:normal;"
    "overflow-wrap:anywhere;display:grid;grid-template-columns:auto minmax(0,1fr);"
    "align-items:start;padding:5px 0;cursor:pointer}"
    ".pw-radio .widget-radio-box input{order:-1;float:none;height:13px;width:13px;"
    "margin:calc((1.4em - 13px) / 2) 8px 0 1px}"
    "</style>"
)


def _radio(q: dict[str, Any]) -> w.RadioButtons:
    """One radio button per option of a single-choice question, nothing picked yet; each
    option's text (label and description) beside its radio; its value is the label."""
    opts = _options(q)
    return w.RadioButtons(options=[(_option_text(o), str(o.get("label", ""))) for o in opts],
                          index=None, _dom_classes=("pw-radio",), **look("full", "radio"))


# A checkbox's description in ipywidgets' CSS is one line (nowrap, cut off with an ellipsis)
# in a row 28 px high: the description goes in as a block that wraps beside the box, its first
# line level with it; the row (layout "option") grows with it.
_OPTION_STYLE = ("display:inline-block;max-width:calc(100% - 2em);white-space:normal;"
                 "vertical-align:top;line-height:1.4;padding:5px 0")


def _checkbox(o: dict[str, Any]) -> w.Checkbox:
    """A checkbox for one option, its description beside it, wrapping when it is long.

    The description is HTML: the option's text escaped, with ``$`` and ``\\`` as character
    references, inside an element MathJax skips (the frontend typesets a checkbox's description
    as math). Its tooltip is the plain text: by default the frontend shows the description's
    HTML source there."""
    return w.Checkbox(value=False, indent=False, description_allow_html=True,
                      description=inline_no_math(_option_text(o), _OPTION_STYLE),
                      tooltip=_option_text(o), **look("option", "checkbox"))


class ToolCard(Card):
    """A tool permission: Allow, Always allow (when the CLI suggests rules), Deny (+reason)."""

    def __init__(self, decision: ToolDecision) -> None:
        head = html_output(_tool_head(decision), layout=shared("full"))
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check",
                                     **look("auto", "button"))
        self.allow_button.on_click(lambda _b: decision.allow(by="user"))
        self.always_button: w.Button | None = None
        if decision.suggestions:
            always = "; ".join(suggestion_text(x) for x in decision.suggestions)
            self.always_button = w.Button(description="Always allow", button_style="info",
                                          icon="check-double", tooltip=f"Also: {always}"[:300],
                                          **look("auto", "button"))
            self.always_button.on_click(lambda _b: decision.allow(always=True, by="user"))
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times",
                                    **look("auto", "button"))
        self.reason = w.Text(placeholder="Reason (optional)", **look("half", "text"))
        self.deny_button.on_click(lambda _b: decision.deny(self.reason.value, by="user"))
        buttons = [self.allow_button, self.always_button, self.deny_button]
        super().__init__(decision, [head, *[b for b in buttons if b], self.reason])


def card_for(decision: Decision) -> Card:
    """The card that shows ``decision``."""
    if isinstance(decision, PlanDecision):
        return PlanCard(decision)
    if isinstance(decision, QuestionDecision):
        return QuestionCard(decision)
    assert isinstance(decision, ToolDecision)
    return ToolCard(decision)
