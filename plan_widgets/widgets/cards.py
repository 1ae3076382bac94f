"""Decision cards: a plan to approve, questions to answer, a tool to allow.

A card's buttons call the decision's methods (``approve``, ``reject``, ``answer``, ``allow``,
``deny``) with ``by="user"``; once the decision is made by anyone, the card shows the outcome
and disables itself. Every model-written text on a card is rendered by the safe path.

A card is made of the widgets a user acts on (buttons, fields, choices) and as few others as
possible: what it shows (title, plan, tool input) is one rendered block, its status one line.
:func:`card_html` is the same card as static HTML, with its outcome: what a finished turn
leaves in the notebook (no widget models behind it).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import ipywidgets as w
from IPython.display import display

from ..agent.decisions import Decision, Outcome, PlanDecision, QuestionDecision, ToolDecision
from ..render.markdown import (
    CARD_TITLE_STYLE,
    escape,
    html_block,
    inline_no_math,
    render_html,
    summarize,
)
from .markdown import html_output
from .shared import CARD_COLORS, close_tree, look, shared

_OUTCOME_TEXT = {
    "approved": "Approved",
    "rejected": "Sent back: keep planning",
    "answered": "Answered",
    "allowed": "Allowed",
    "always": "Always allowed",
    "denied": "Denied",
    "expired": "Expired: no answer came, so it was denied",
    "cancelled": "Cancelled, so it was denied",
}
_ENDED_TEXT = {
    # (status, by) when the actor changes what happened, not only why
    ("expired", "cli"): "Expired: the Claude Code CLI exited, so it was denied",
    ("cancelled", "cli"): "Cancelled: withdrawn by the CLI, so it was denied",
    ("expired", "restart"): "Expired: the kernel restarted before an answer came",
}
_BY_TEXT = {
    "timeout": "timed out",
    "interrupt": "interrupted",
    "close": "session closed",
    "cli": "withdrawn by the CLI",
    "restart": "the kernel restarted",
    "gate": "refused by the gate",
}
PLAN_TITLE = "Plan proposed: review before anything is edited"
QUESTION_TITLE = "The agent asks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _when(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _title(text: str) -> str:
    return f'<div class="pw-card-title" style="{CARD_TITLE_STYLE}">{escape(text)}</div>'


def status_html(d: Decision) -> str:
    """The card's status line (safe HTML): waiting since when, or how it ended."""
    o = d.outcome
    superseded = isinstance(d, PlanDecision) and d.superseded
    if o is None and superseded:
        return "<span>Superseded by a revised plan below</span>"
    if o is None:
        until = f"; expires at {_when(d.expires_at)}" if d.expires_at else ""
        return (f'<span style="color:#b45309">Waiting for you (since {_when(d.asked_at)}'
                f"{until})</span>")
    text, extra = _outcome_parts(o)
    color = "#047857" if o.granted else "#b91c1c"
    sup = " · superseded by a revised plan below" if superseded else ""
    detail = f" ({escape('; '.join(extra))})" if extra else ""
    return (f'<span style="color:{color}"><b>{escape(text)}</b>{detail} at {_when(o.at)}'
            f"{escape(sup)}</span>")


def _plan_head(d: PlanDecision) -> str:
    parts = [_title(PLAN_TITLE), render_html(d.plan, card=True)]
    if d.plan_file:
        parts.append(f"<div><small>Plan file: <code>{escape(d.plan_file)}</code></small></div>")
    return "".join(parts)


def _options(q: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in q.get("options") or [] if isinstance(o, dict)]


def _option_text(o: dict[str, Any]) -> str:
    """An option as one line of plain text: its label, and its description beside it."""
    label = str(o.get("label", ""))
    desc = str(o.get("description") or "").strip()
    return f"{label} — {desc}" if desc else label


def _question_head(q: dict[str, Any]) -> str:
    head = f"<b>{escape(str(q.get('header', '')))}</b> " if q.get("header") else ""
    return f'<div class="pw-question">{head}{escape(str(q.get("question", "")))}</div>'


def _question_static(d: QuestionDecision) -> str:
    """The questions with every option once, the chosen ones marked (static card)."""
    answers = (d.outcome.answers or {}) if d.outcome is not None else {}
    parts = [_title(QUESTION_TITLE)]
    for q in d.questions:
        given = answers.get(str(q.get("question", "")))
        chosen = {x.strip() for x in given.split(",")} if given else set()
        multi = bool(q.get("multiSelect"))
        items = []
        for o in _options(q):
            picked = str(o.get("label", "")) in chosen
            mark = ("☑" if picked else "☐") if multi else ("◉" if picked else "○")
            label = escape(str(o.get("label", "")))
            label = f"<b>{label}</b>" if picked else label
            desc = str(o.get("description") or "").strip()
            items.append(f"<li>{mark} {label}{' — ' + escape(desc) if desc else ''}</li>")
        parts.append(_question_head(q))
        if items:
            parts.append('<ul style="list-style:none;margin:0.2em 0 0.5em 0;padding-left:0.5em">'
                         + "".join(items) + "</ul>")
    return "".join(parts)


def _tool_head(d: ToolDecision) -> str:
    parts = [_title(d.title or f"Allow {d.tool}?"), _tool_preview(d.tool, d.input)]
    if d.suggestions:
        always = "; ".join(suggestion_text(x) for x in d.suggestions)
        parts.append(f"<div><small>Always allow also applies: {escape(always)}</small></div>")
    return "".join(parts)


def card_html(d: Decision) -> str:
    """The card as static, safe HTML (one raw HTML block): what was asked, and its status."""
    if isinstance(d, PlanDecision):
        head = _plan_head(d)
    elif isinstance(d, QuestionDecision):
        head = _question_static(d)
    else:
        assert isinstance(d, ToolDecision)
        head = _tool_head(d)
    frame = f"border:2px solid {CARD_COLORS[d.kind]};padding:6px 10px;margin:6px 0"
    return html_block(
        f'<div class="pw-card pw-card-{d.kind} pw-static" style="{frame}">{head}'
        f'<div class="pw-card-status">{status_html(d)}</div></div>', "pw-html")


def _outcome_parts(o: Outcome) -> tuple[str, list[str]]:
    """What an outcome says: the headline and its details (plain text)."""
    text = _ENDED_TEXT.get((o.status, o.by)) or _OUTCOME_TEXT.get(o.status, o.status)
    extra = []
    if o.by in _BY_TEXT and (o.status, o.by) not in _ENDED_TEXT:
        extra.append(_BY_TEXT[o.by])
    if o.mode and o.status == "approved":
        extra.append(f"next mode: {o.mode}")
    if o.feedback and o.status in ("rejected", "denied"):
        extra.append(f"feedback: {summarize(o.feedback, 200)}")
    if o.answers:
        extra.append("; ".join(f"{summarize(k, 60)} = {summarize(v, 80)}"
                               for k, v in o.answers.items()))
    if o.notes:
        extra.append("; ".join(f"note on {summarize(k, 60)}: {summarize(v, 80)}"
                               for k, v in o.notes.items()))
    return text, extra


def decision_markdown(d: Decision) -> str:
    """A decision as Markdown source, for frontends without widgets: what was asked and,
    once decided, how it ended (untrusted parts go through the safe renderer like any text)."""
    if isinstance(d, PlanDecision):
        lines = ["**Plan proposed**", "", d.plan]
    elif isinstance(d, QuestionDecision):
        lines = ["**The agent asks**", ""]
        for q in d.questions:
            labels = ", ".join(str(o.get("label", "")) for o in q.get("options") or []
                               if isinstance(o, dict))
            head = f"**{q.get('header')}**: " if q.get("header") else ""
            lines.append(f"- {head}{q.get('question', '')}" + (f" ({labels})" if labels else ""))
    else:
        assert isinstance(d, ToolDecision)
        lines = [f"**Permission asked**: `{d.tool}` {summarize(d.input, 200)}"]
    o = d.outcome
    if o is None:
        state = "superseded by a revised plan" if getattr(d, "superseded", False) else (
            "waiting for you")
    else:
        text, extra = _outcome_parts(o)
        state = text + (f" ({'; '.join(extra)})" if extra else "") + f" at {_when(o.at)}"
    return "\n".join([*lines, "", f"*{state}*"])


class Card(w.Box):
    """Common frame: the card's widgets, then its status line (the last child)."""

    def __init__(self, decision: Decision, controls: list[w.Widget]) -> None:
        self.decision = decision
        self.status = w.HTML(**look("full", "html"), _dom_classes=("pw-card-status",))
        self._handle: Any = None  # a display of its own (show_card), else part of a turn's
        self._closed = False
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
        self._set_status(status_html(d))
        if d.outcome is not None and self._handle is not None:
            _soon(self.make_static)

    def _set_status(self, safe_html: str) -> None:
        self.status.value = html_block(safe_html, "pw-status")

    def mimebundle(self) -> dict[str, Any]:
        """The card's display bundle: the widget, and the static card for other frontends."""
        return {
            WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": self.model_id},
            "text/markdown": card_html(self.decision),
            "text/plain": decision_markdown(self.decision),
        }

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
        self.feedback = w.Textarea(placeholder="What should change? (feedback for the agent)",
                                   rows=3, **look("full", "text"))
        self.approve_button = w.Button(description="Approve", button_style="success",
                                       icon="check", tooltip=f"Back to {decision.resting_mode}",
                                       **look("auto", "button"))
        self.approve_edits_button: w.Button | None = None
        if decision.resting_mode != "acceptEdits":
            self.approve_edits_button = w.Button(
                description="Approve, auto-accept edits", button_style="info",
                icon="check-double", **look("auto", "button"))
            self.approve_edits_button.on_click(
                lambda _b: decision.approve("acceptEdits", by="user"))
        self.keep_button = w.Button(description="Keep planning", button_style="warning",
                                    icon="pencil", **look("auto", "button"))
        self.approve_button.on_click(lambda _b: decision.approve(by="user"))
        self.keep_button.on_click(lambda _b: decision.reject(self.feedback.value, by="user"))
        buttons = [self.approve_button, self.approve_edits_button, self.keep_button]
        super().__init__(decision, [head, self.feedback, *[b for b in buttons if b]])


class QuestionCard(Card):
    """Each question once: its options with their descriptions beside them (radio buttons for
    one choice, checkboxes for several), an Other field and a Notes field; then Submit."""

    def __init__(self, decision: QuestionDecision) -> None:
        self._pickers: list[tuple[dict[str, Any], Any, w.Text, w.Text]] = []
        self._warned: frozenset[str] | None = None
        controls: list[w.Widget] = []
        for i, q in enumerate(decision.questions):
            head = (_title(QUESTION_TITLE) if i == 0 else "") + _question_head(q)
            controls.append(w.HTML(html_block(head, "pw-html"), **look("full", "html")))
            options = _options(q)
            picker: Any
            if q.get("multiSelect"):
                picker = [(str(o.get("label", "")), _checkbox(o)) for o in options]
                controls.extend(box for _label, box in picker)
            else:
                picker = w.RadioButtons(
                    options=[(_option_text(o), str(o.get("label", ""))) for o in options],
                    value=None, **look("full", "description"))
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
            if isinstance(picker, list):
                chosen = [label for label, box in picker if box.value]
            else:
                chosen = [str(picker.value)] if picker.value else []
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
            self._set_status('<span style="color:#b91c1c">Pick an option or write one.</span>')
            return
        if missing and self._warned != frozenset(missing):
            # as Claude Code's own review step: say what is unanswered, send on a second Submit
            self._warned = frozenset(missing)
            self._set_status(
                '<span style="color:#b45309">Not answered yet: '
                f"{escape(', '.join(missing))}. Press Submit again to send as it is.</span>"
            )
            return
        d.answer(answers, notes=notes, by="user")


def _checkbox(o: dict[str, Any]) -> w.Checkbox:
    """A checkbox for one option, its description beside it.

    The frontend typesets a checkbox's description as math; text with ``$`` or ``\\`` goes in
    as HTML (escaped, TeX characters as references) inside an element MathJax skips."""
    text = _option_text(o)
    kw: dict[str, Any] = {"description": text}
    if "$" in text or "\\" in text:
        kw = {"description": inline_no_math(text), "description_allow_html": True}
    return w.Checkbox(value=False, indent=False, **kw, **look("full", "checkbox"))


def _tool_preview(tool: str, tool_input: dict[str, Any]) -> str:
    """A compact, escaped HTML view of a tool call's input."""
    if tool == "Bash":
        cmd = str(tool_input.get("command", ""))
        return f"<pre>$ {escape(cmd)}</pre>"
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        parts = [f"<div><code>{escape(str(path))}</code></div>"]
        if tool == "Write":
            content = str(tool_input.get("content", ""))
            lines = content.splitlines()[:40]
            parts.append("<pre>" + escape("\n".join("+ " + ln for ln in lines)) + "</pre>")
        else:
            edits = tool_input.get("edits") or [tool_input]
            for e in edits[:10]:
                old = str(e.get("old_string", "")).splitlines()[:20]
                new = str(e.get("new_string", "")).splitlines()[:20]
                diff = ["- " + ln for ln in old] + ["+ " + ln for ln in new]
                parts.append("<pre>" + escape("\n".join(diff)) + "</pre>")
        return "".join(parts)
    body = json.dumps(tool_input, indent=1, ensure_ascii=False, default=str)
    if len(body) > 2000:
        body = body[:2000] + "\n…"
    return f"<pre>{escape(body)}</pre>"


def suggestion_text(s: Any) -> str:
    """What one of the CLI's suggested permission updates does, in a few words."""
    get = s.get if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))
    kind = str(get("type", "") or "")
    where = get("destination")
    where = f" ({where})" if where else ""
    if kind == "setMode":
        return f"switch to mode {get('mode')}{where}"
    if kind in ("addRules", "replaceRules"):
        rules = []
        for r in get("rules") or []:
            rg = r.get if isinstance(r, dict) else (lambda k, d=None, r=r: getattr(r, k, d))
            tool = rg("tool_name") or rg("toolName") or "?"
            content = rg("rule_content") or rg("ruleContent")
            rules.append(f"{tool}({content})" if content else str(tool))
        verb = get("behavior") or "allow"
        return f"{verb} {', '.join(rules) or 'rules'}{where}"
    if kind == "addDirectories":
        return f"add directories {', '.join(map(str, get('directories') or []))}{where}"
    return kind or repr(s)


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
