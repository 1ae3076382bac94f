"""A decision as static, safe HTML and as text: what a card shows, and how it ended.

The live cards (:mod:`.cards`) show the same parts; :func:`card_html` is the whole card with
its outcome, which a finished turn leaves in the notebook (no widget models behind it), and
:func:`decision_markdown` its plain-text form.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..agent.decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from ..agent.gate import EDIT_TOOLS
from ..render.agents import asker
from ..render.code import highlight_python
from ..render.markdown import (
    CARD_TITLE_STYLE,
    SMALL_STYLE,
    WRAP_STYLE,
    escape,
    html_block,
    summarize,
)
from ..render.outcomes import outcome_parts
from .plan_edit import plan_head, plan_markdown
from .shared import CARD_COLORS

QUESTION_TITLE = "The agent asks"


def _when(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def _title(text: str) -> str:
    return f'<div class="pw-card-title" style="{CARD_TITLE_STYLE}">{escape(text)}</div>'


def asker_html(d: Decision) -> str:
    """The card's first line naming the subagent that asks (safe HTML; empty for the main
    agent)."""
    who = asker(d)
    return (f'<div class="pw-card-asker" style="{SMALL_STYLE};color:#6d28d9">↳ {escape(who)}'
            "</div>") if who else ""


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
    text, extra = outcome_parts(o)
    color = "#047857" if o.granted else "#b91c1c"
    sup = " · superseded by a revised plan below" if superseded else ""
    if getattr(d, "fresh", False):  # issue 22: agent/handoff
        sup += " · started fresh: the plan runs in a new conversation"
    detail = f" ({escape('; '.join(extra))})" if extra else ""
    return (f'<span style="color:{color}"><b>{escape(text)}</b>{detail} at {_when(o.at)}'
            f"{escape(sup)}</span>")


def _plan_head(d: PlanDecision) -> str:
    return plan_head(d)  # the approved edit, a revision's changes, or the plan (plan_edit)


def _wrapping(safe_html: str) -> str:
    """``safe_html`` in a block whose long words break instead of widening the card."""
    return f'<div style="{WRAP_STYLE}">{safe_html}</div>'


def _options(q: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in q.get("options") or [] if isinstance(o, dict)]


def _option_text(o: dict[str, Any]) -> str:
    """An option as one line of plain text: its label, and its description beside it."""
    label = str(o.get("label", ""))
    desc = str(o.get("description") or "").strip()
    return f"{label} — {desc}" if desc else label


def _question_head(q: dict[str, Any], hint: str = "") -> str:
    """A question's header and text; ``hint``: safe HTML after them."""
    head = f"<b>{escape(str(q.get('header', '')))}</b> " if q.get("header") else ""
    return f'<div class="pw-question">{head}{escape(str(q.get("question", "")))}{hint}</div>'


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
        parts.append(f'<div style="{SMALL_STYLE}">Always allow also applies: {escape(always)}'
                     "</div>")
    return _wrapping("".join(parts))


def card_html(d: Decision) -> str:
    """The card as static, safe HTML (one raw HTML block): what was asked, and its status."""
    if isinstance(d, PlanDecision):
        head = _plan_head(d)
    elif isinstance(d, QuestionDecision):
        head = _question_static(d)
    else:
        assert isinstance(d, ToolDecision)
        head = _tool_head(d)
    frame = f"border:2px solid {CARD_COLORS[d.kind]};padding:6px 10px;margin:6px 0;{WRAP_STYLE}"
    return html_block(
        f'<div class="pw-card pw-card-{d.kind} pw-static" style="{frame}">{asker_html(d)}{head}'
        f'<div class="pw-card-status">{status_html(d)}</div></div>', "pw-html")


def decision_markdown(d: Decision) -> str:
    """A decision as Markdown source, for frontends without widgets: what was asked and,
    once decided, how it ended (untrusted parts go through the safe renderer like any text)."""
    if isinstance(d, PlanDecision):
        lines = plan_markdown(d)
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
    who = asker(d)
    if who:
        lines = [f"*{who}*", "", *lines]
    o = d.outcome
    if o is None:
        state = "superseded by a revised plan" if getattr(d, "superseded", False) else (
            "waiting for you")
    else:
        text, extra = outcome_parts(o)
        state = text + (f" ({'; '.join(extra)})" if extra else "") + f" at {_when(o.at)}"
        if getattr(d, "fresh", False):  # issue 22: agent/handoff
            state += "; started fresh: the plan runs in a new conversation"
    return "\n".join([*lines, "", f"*{state}*"])


def _tool_preview(tool: str, tool_input: dict[str, Any]) -> str:
    """A compact, escaped HTML view of a tool call's input."""
    if tool.startswith("mcp__") and isinstance(tool_input.get("code"), str):  # kernel code
        return highlight_python(tool_input["code"])
    if tool == "Bash":
        cmd = str(tool_input.get("command", ""))
        return f"<pre>$ {escape(cmd)}</pre>"
    if tool in EDIT_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        parts = [f"<div><code>{escape(str(path))}</code></div>"]
        if tool == "Write":
            content = str(tool_input.get("content", ""))
            lines = content.splitlines()[:40]
            parts.append("<pre>" + _diff([], lines) + "</pre>")
        else:
            edits = tool_input.get("edits") or [tool_input]
            for e in edits[:10]:
                old = str(e.get("old_string", "")).splitlines()[:20]
                new = str(e.get("new_string", "")).splitlines()[:20]
                parts.append("<pre>" + _diff(old, new) + "</pre>")
        return "".join(parts)
    body = json.dumps(tool_input, indent=1, ensure_ascii=False, default=str)
    if len(body) > 2000:
        body = body[:2000] + "\n…"
    return f"<pre>{escape(body)}</pre>"


def _diff(old: list[str], new: list[str]) -> str:
    """Removed and added lines (escaped HTML for a ``<pre>``), in red and green."""
    return "\n".join([f'<span style="color:#b91c1c">{escape("- " + ln)}</span>' for ln in old]
                     + [f'<span style="color:#047857">{escape("+ " + ln)}</span>' for ln in new])


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
