"""Decision cards: a plan to approve, questions to answer, a tool to allow.

A card's buttons call the decision's methods (``approve``, ``reject``, ``answer``, ``allow``,
``deny``) with ``by="user"``; once the decision is made by anyone, the card shows the outcome
and disables itself. Every model-written text on a card is rendered by the safe path.
"""

from __future__ import annotations

import json
import time
from typing import Any

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from ..agent.decisions import Decision, Outcome, PlanDecision, QuestionDecision, ToolDecision
from ..render.code import highlight_python
from ..render.markdown import escape, summarize
from .markdown import html_output, markdown_output

_BORDER = {"plan": "#7c3aed", "question": "#2563eb", "tool": "#b45309"}
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


def _when(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


_SHARED: dict[str, w.Widget] = {}
_SHARED_KINDS: dict[str, type[w.Widget]] = {
    "layout": w.Layout, "button": w.ButtonStyle, "html": HTMLStyle,
}


def _plain(style: str) -> dict[str, Any]:
    """``layout=`` and ``style=`` for a card widget that keeps the default look: one shared
    model each, instead of two more comm_opens per widget (a card shows sooner; see
    docs/benchmarks.md, figure 2). Never mutate these; pass a widget its own to restyle it."""
    out: dict[str, Any] = {}
    for key, kind in (("layout", "layout"), ("style", style)):
        obj = _SHARED.get(kind)
        if obj is None or obj.comm is None:  # first use, or closed (Widget.close_all)
            obj = _SHARED[kind] = _SHARED_KINDS[kind]()
        out[key] = obj
    return out


class Card(w.VBox):
    """Common frame: title, body, actions, and a status line."""

    def __init__(self, decision: Decision, title: str, body: list[w.Widget],
                 actions: list[w.Widget]) -> None:
        self.decision = decision
        self.status = w.HTML(**_plain("html"))
        self.actions = w.HBox(actions, layout=w.Layout(flex_flow="row wrap"))
        header = w.HTML(f"<b>{escape(title)}</b>", **_plain("html"))
        super().__init__(
            [header, *body, self.actions, self.status],
            layout=w.Layout(
                border=f"2px solid {_BORDER[decision.kind]}", padding="6px 10px",
                margin="6px 0",
            ),
        )
        self.add_class("pw-card")
        self.add_class(f"pw-card-{decision.kind}")
        decision.watch(self.refresh)
        self.refresh()

    def _inputs(self) -> list[w.Widget]:
        out: list[w.Widget] = []
        stack: list[w.Widget] = [self.actions, *self.children]
        while stack:
            c = stack.pop()
            if isinstance(c, w.Box):
                stack.extend(c.children)
            elif hasattr(c, "disabled"):
                out.append(c)
        return out

    def refresh(self) -> None:
        """Show the decision's state; disable every control once it is made."""
        d = self.decision
        o = d.outcome
        superseded = isinstance(d, PlanDecision) and d.superseded
        if o is None and superseded:
            self.status.value = "<span>Superseded by a revised plan below</span>"
            return
        if o is None:
            until = f"; expires at {_when(d.expires_at)}" if d.expires_at else ""
            self.status.value = (
                f'<span style="color:#b45309">Waiting for you (since {_when(d.asked_at)}'
                f"{until})</span>"
            )
            return
        for c in self._inputs():
            c.disabled = True
        text, extra = _outcome_parts(o)
        color = "#047857" if o.granted else "#b91c1c"
        sup = " · superseded by a revised plan below" if superseded else ""
        detail = f" ({escape('; '.join(extra))})" if extra else ""
        self.status.value = (
            f'<span style="color:{color}"><b>{escape(text)}</b>{detail} at {_when(o.at)}'
            f"{escape(sup)}</span>"
        )


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


class PlanCard(Card):
    """The plan as Markdown, with Approve / Approve, auto-accept edits / Keep planning."""

    def __init__(self, decision: PlanDecision) -> None:
        self.approve_button = w.Button(description="Approve", button_style="success",
                                       icon="check", tooltip=f"Back to {decision.resting_mode}",
                                       **_plain("button"))
        self.approve_edits_button = w.Button(description="Approve, auto-accept edits",
                                             button_style="info", icon="check-double",
                                             layout=w.Layout(width="auto"))
        self.feedback = w.Textarea(placeholder="What should change? (feedback for the agent)",
                                   layout=w.Layout(width="100%", height="60px"))
        self.keep_button = w.Button(description="Keep planning", button_style="warning",
                                    icon="pencil", **_plain("button"))
        self.approve_button.on_click(lambda _b: decision.approve(by="user"))
        self.approve_edits_button.on_click(lambda _b: decision.approve("acceptEdits", by="user"))
        self.keep_button.on_click(lambda _b: decision.reject(self.feedback.value, by="user"))
        body: list[w.Widget] = [markdown_output(decision.plan)]
        if decision.plan_file:
            body.append(w.HTML(f'<small>Plan file: <code>{escape(decision.plan_file)}</code>'
                               "</small>", **_plain("html")))
        body.append(self.feedback)
        actions: list[w.Widget] = [self.approve_button, self.keep_button]
        if decision.resting_mode != "acceptEdits":
            actions.insert(1, self.approve_edits_button)
        super().__init__(decision, "Plan proposed: review before anything is edited", body,
                         actions)


class QuestionCard(Card):
    """Each question with its options (and descriptions), Other and Notes fields, and Submit."""

    def __init__(self, decision: QuestionDecision) -> None:
        self._pickers: list[tuple[dict[str, Any], w.Widget, w.Text, w.Text]] = []
        self._warned: frozenset[str] | None = None
        body: list[w.Widget] = []
        for q in decision.questions:
            options = [o for o in q.get("options") or [] if isinstance(o, dict)]
            labels = [str(o.get("label", "")) for o in options]
            head = f"<b>{escape(str(q.get('header', '')))}</b> " if q.get("header") else ""
            body.append(w.HTML(f"{head}{escape(str(q.get('question', '')))}"))
            desc = "".join(
                f"<li><b>{escape(str(o.get('label', '')))}</b>"
                f"{': ' + escape(str(o.get('description'))) if o.get('description') else ''}</li>"
                for o in options
            )
            if desc:
                body.append(html_output(f"<ul>{desc}</ul>"))
            if q.get("multiSelect"):
                rows = min(6, max(2, len(labels)))
                picker: w.Widget = w.SelectMultiple(options=labels, rows=rows)
            else:
                picker = w.RadioButtons(options=labels, value=None)
            other = w.Text(placeholder="Other (free text)")
            notes = w.Text(placeholder="Notes for the agent (optional)")
            body.extend([picker, w.HBox([other, notes])])
            self._pickers.append((q, picker, other, notes))
        self.submit_button = w.Button(description="Submit", button_style="primary", icon="reply",
                                      **_plain("button"))
        self.submit_button.on_click(lambda _b: self._submit())
        super().__init__(decision, "The agent asks", body, [self.submit_button])

    def _submit(self) -> None:
        answers: dict[str, str | list[str]] = {}
        notes: dict[str, str] = {}
        missing: list[str] = []
        for q, picker, other, note in self._pickers:
            text = str(q.get("question", ""))
            chosen: list[str] = []
            val = picker.value
            if isinstance(val, tuple | list):
                chosen.extend(map(str, val))
            elif val:
                chosen.append(str(val))
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
            self.status.value = '<span style="color:#b91c1c">Pick an option or write one.</span>'
            return
        if missing and self._warned != frozenset(missing):
            # as Claude Code's own review step: say what is unanswered, send on a second Submit
            self._warned = frozenset(missing)
            self.status.value = (
                '<span style="color:#b45309">Not answered yet: '
                f"{escape(', '.join(missing))}. Press Submit again to send as it is.</span>"
            )
            return
        d.answer(answers, notes=notes, by="user")


def _tool_preview(tool: str, tool_input: dict[str, Any]) -> str:
    """A compact, escaped HTML view of a tool call's input."""
    if tool.startswith("mcp__") and isinstance(tool_input.get("code"), str):  # kernel code
        return highlight_python(tool_input["code"])
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
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check",
                                     **_plain("button"))
        self.always_button = w.Button(description="Always allow", button_style="info",
                                      icon="check-double", **_plain("button"))
        self.reason = w.Text(placeholder="Reason (optional)")
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times",
                                    **_plain("button"))
        self.allow_button.on_click(lambda _b: decision.allow(by="user"))
        self.always_button.on_click(lambda _b: decision.allow(always=True, by="user"))
        self.deny_button.on_click(lambda _b: decision.deny(self.reason.value, by="user"))
        actions: list[w.Widget] = [self.allow_button]
        if decision.suggestions:
            actions.append(self.always_button)
        actions.extend([self.deny_button, self.reason])
        title = decision.title or f"Allow {decision.tool}?"
        body: list[w.Widget] = [html_output(_tool_preview(decision.tool, decision.input))]
        if decision.suggestions:
            always = "; ".join(suggestion_text(x) for x in decision.suggestions)
            self.always_button.tooltip = f"Also: {always}"[:300]
            body.append(w.HTML(f"<small>Always allow also applies: {escape(always)}</small>"))
        super().__init__(decision, title, body, actions)


def card_for(decision: Decision) -> Card:
    """The card that shows ``decision``."""
    if isinstance(decision, PlanDecision):
        return PlanCard(decision)
    if isinstance(decision, QuestionDecision):
        return QuestionCard(decision)
    assert isinstance(decision, ToolDecision)
    return ToolCard(decision)
