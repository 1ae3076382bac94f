"""The question decision (``AskUserQuestion``): its card, its static forms, its terminal form.

The card shows each question once, its options with their descriptions; the static card the
same questions with the chosen options marked; the terminal numbers the options and reads a
number, a label or the user's own words (:mod:`plan_widgets.render.prompts`).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ...agent.decisions import QuestionDecision
from ...render import prompts
from ...render.decision import title_html, wrapping
from ...render.look import BORDER, ERROR, MUTED, OPTION_STYLE, WARN
from ...render.markdown import escape, html_block, inline_no_math
from ..shared import look, on_click, typed_line
from ..typed import TypedBox
from .frame import Card, Kind, Terminal, lines_html, markdown_card, static_card

QUESTION_TITLE = "The agent asks"


def options(q: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in q.get("options") or [] if isinstance(o, dict)]


def option_text(o: dict[str, Any]) -> str:
    """An option as one line of plain text: its label, and its description beside it."""
    label = str(o.get("label", ""))
    desc = str(o.get("description") or "").strip()
    return f"{label} — {desc}" if desc else label


def question_head(q: dict[str, Any], hint: str = "") -> str:
    """A question's header and text; ``hint``: safe HTML after them."""
    head = f"<b>{escape(str(q.get('header', '')))}</b> " if q.get("header") else ""
    return f'<div class="pw-question">{head}{escape(str(q.get("question", "")))}{hint}</div>'


class QuestionCard(Card):
    """Each question once: its options with their descriptions beside them (radio buttons for
    a single choice, a checkbox each for several), an Other field and a Notes field; then
    Submit.

    A single choice is one ``RadioButtons`` (one widget model for all its options, nothing
    picked until the user clicks). Its option labels are text nodes (``textContent``: never
    HTML, never typeset as math; checked in the browser with ``$HOME and $PATH`` and ``\\(x\\)``)
    but ipywidgets' CSS gives each one line 20 px high: a description that wraps ran over the
    next option (measured in JupyterLab at 800 px: a label's text 40 px high in 20 px). So the
    card's first HTML widget carries :data:`RADIO_CSS`, a trusted ``<style>`` scoped to the
    class ``pw-radio`` of the card's radio groups: each label grows with its text and is a grid
    of the radio and the text, which wraps beside it, the radio level with its first line.
    tests/test_browser_cards.py measures this in JupyterLab 4 and Notebook 7 (Chromium) at 800
    and 1,400 px: no text runs into the next option or out of its label, each radio is
    visible, left of its text and level with its first line. A multi-select question's
    checkbox descriptions are HTML, so they wrap (see :func:`checkbox`)."""

    decision: QuestionDecision

    def __init__(self, decision: QuestionDecision) -> None:
        self._pickers: list[tuple[dict[str, Any], w.RadioButtons | list[tuple[str, w.Checkbox]],
                                  TypedBox, TypedBox]] = []
        self._warned: frozenset[str] | None = None
        controls: list[w.Widget] = []
        radios = any(not q.get("multiSelect") for q in decision.questions)
        for i, q in enumerate(decision.questions):
            multi = bool(q.get("multiSelect"))
            hint = f' <span style="color:{MUTED}">(pick any)</span>' if multi else ""
            title = (RADIO_CSS if radios else "") + title_html(QUESTION_TITLE)
            head = (title if i == 0 else "") + question_head(q, hint)
            controls.append(w.HTML(html_block(lines_html(wrapping(head)), "pw-html"),
                                   **look("full", "html")))
            picker: w.RadioButtons | list[tuple[str, w.Checkbox]]
            if multi:
                picker = [(str(o.get("label", "")), checkbox(o)) for o in options(q)]
                controls.extend(box for _label, box in picker)
            else:
                picker = radio(q)
                controls.append(picker)
            other = typed_line(placeholder="Other (free text)")
            notes = typed_line(placeholder="Notes for the agent (optional)")
            controls.extend([other, notes])
            self._pickers.append((q, picker, other, notes))
        self.submit_button = w.Button(description="Submit", button_style="primary", icon="reply",
                                      **look("auto", "button-primary"))
        on_click(self.submit_button, lambda _b: self._submit())
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
        if not answers:
            self.set_status(f'<span style="color:{ERROR}">Pick an option or write one.</span>')
            return
        if missing and self._warned != frozenset(missing):
            # as Claude Code's own review step: say what is unanswered, send on a second Submit
            self._warned = frozenset(missing)
            self.set_status(
                f'<span style="color:{WARN}">Not answered yet: '
                f"{escape(', '.join(missing))}. Press Submit again to send as it is.</span>"
            )
            return
        d.answer(answers, notes=notes, by="user")

    def static_html(self) -> str:
        return static_html(self.decision)

    def markdown(self) -> str:
        return markdown(self.decision)


# A radio option's label in ipywidgets' CSS is one line 20 px high (its radio floats left of
# it): here it grows with its text, a grid of the radio and the text beside it, the text
# wrapping (a long word too), the radio centred on the first line (line height 1.4 = 18.2 px
# at the widgets' 13 px, a 13 px radio). Trusted, and scoped to the class of the cards' own
# radio groups. It must have no "$" or backslash: html_block writes those as character
# references, which a <style> element's text does not decode.
RADIO_CSS = (
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


def radio(q: dict[str, Any]) -> w.RadioButtons:
    """One radio button per option of a single-choice question, nothing picked yet; each
    option's text (label and description) beside its radio; its value is the label."""
    opts = options(q)
    return w.RadioButtons(options=[(option_text(o), str(o.get("label", ""))) for o in opts],
                          index=None, _dom_classes=("pw-radio",), **look("full", "radio"))


# A checkbox's description in ipywidgets' CSS is one line (nowrap, cut off with an ellipsis)
# in a row 28 px high: the description goes in as a block that wraps beside the box, its first
# line level with it; the row (layout "option") grows with it.


def checkbox(o: dict[str, Any]) -> w.Checkbox:
    """A checkbox for one option, its description beside it, wrapping when it is long.

    The description is HTML: the option's text escaped, with ``$`` and ``\\`` as character
    references, inside an element MathJax skips (the frontend typesets a checkbox's description
    as math). Its tooltip is the plain text: by default the frontend shows the description's
    HTML source there."""
    return w.Checkbox(value=False, indent=False, description_allow_html=True,
                      description=inline_no_math(option_text(o), OPTION_STYLE),
                      tooltip=option_text(o), **look("option", "checkbox"))


def static_html(d: QuestionDecision) -> str:
    """The questions with every option once, the chosen ones marked (static card)."""
    answers = (d.outcome.answers or {}) if d.outcome is not None else {}
    parts = [title_html(QUESTION_TITLE)]
    for q in d.questions:
        given = answers.get(str(q.get("question", "")))
        chosen = {x.strip() for x in given.split(",")} if given else set()
        multi = bool(q.get("multiSelect"))
        items = []
        for o in options(q):
            picked = str(o.get("label", "")) in chosen
            mark = ("☑" if picked else "☐") if multi else ("◉" if picked else "○")
            label = escape(str(o.get("label", "")))
            label = f"<b>{label}</b>" if picked else label
            desc = str(o.get("description") or "").strip()
            items.append(f"<li>{mark} {label}{' — ' + escape(desc) if desc else ''}</li>")
        parts.append(question_head(q))
        if items:
            parts.append('<ul style="list-style:none;margin:0.2em 0 0.5em 0;padding-left:0.5em">'
                         + "".join(items) + "</ul>")
    return static_card(d, "".join(parts))


def markdown(d: QuestionDecision) -> str:
    lines = ["**The agent asks**", ""]
    for q in d.questions:
        labels = ", ".join(str(o.get("label", "")) for o in q.get("options") or []
                           if isinstance(o, dict))
        head = f"**{q.get('header')}**: " if q.get("header") else ""
        lines.append(f"- {head}{q.get('question', '')}" + (f" ({labels})" if labels else ""))
    return markdown_card(d, lines)


# -- the terminal form -----------------------------------------------------------------------

def show_text(d: QuestionDecision, out: Terminal) -> None:
    for q in d.questions:
        multi = " (choose one or more)" if q.get("multiSelect") else ""
        out.line("")
        out.line(f"? {q.get('question', '')}{multi}", style="bold")
        for i, o in enumerate(q.get("options") or [], 1):
            desc = o.get("description") or ""
            out.line(f"   {i}. {o.get('label', '')}" + (f"  {desc}" if desc else ""))


async def ask_text(d: QuestionDecision, io: Terminal) -> None:
    """Each question in turn; an answer that is not one of its choices is asked again."""
    answers: dict[str, str | list[str]] = {}
    several = len(d.questions) > 1
    for q in d.questions:
        labels = [str(o.get("label", "")) for o in q.get("options") or []]
        multi = bool(q.get("multiSelect"))
        prompt = prompts.question_prompt(len(labels), multi)
        if several:
            name = " ".join(str(q.get("header") or q.get("question", "")).split())
            prompt = f"{io.safe(name)[:40]}: {prompt}"  # model text
        while True:
            raw = await io.ask(prompt)
            try:
                answers[str(q.get("question", ""))] = prompts.read_question_answer(
                    raw, labels, multi)
                break
            except prompts.NotAChoice as e:
                io.line(str(e), style="yellow")
    d.answer(answers, by="user")


KIND = Kind[QuestionDecision](
    name="question", color=BORDER["question"], matches=lambda d: isinstance(d, QuestionDecision),
    card=QuestionCard, static_html=static_html, markdown=markdown, show_text=show_text,
    ask_text=ask_text)
