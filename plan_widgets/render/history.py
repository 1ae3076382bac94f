"""A session's history in words: one line per event, the turns, how each decision ended.

Plain text (escape it before it goes into HTML), which the history commands read, and the
resumed session's history view (:func:`history_html`): static HTML, not widgets, because
nothing in it can be answered and a widget would stay live in the notebook for nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..model import Cost
from ..model import events as ev
from .look import ERROR, MUTED, SUCCESS
from .markdown import WRAP_STYLE, escape, html_block, render_html, summarize
from .outcomes import decision_status
from .table import table_html


def when(ts: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A timestamp in local time (``?`` if unknown)."""
    return time.strftime(fmt, time.localtime(ts)) if ts else "?"


_BOX: dict[Any, str] = {"completed": "x", "in_progress": "~"}


def event_summary(e: Any, limit: int = 140) -> str:
    """One line of plain text about an event (escape it before putting it in HTML)."""
    text = _SUMMARIES.get(type(e), _fields)(e, limit)
    return summarize(text, limit)


def _fields(e: Any, limit: int) -> str:
    """An event's own fields, as they are (for events with nothing better to say)."""
    return summarize(e.model_dump(exclude={"type", "ts", "seq"}), limit)


def _session_started(e: ev.SessionStarted, limit: int) -> str:
    return (f"{'resumed' if e.resumed_from else 'started'} in {e.cwd}; resting mode "
            f"{e.resting_mode}; model {e.model or 'default'}")


def _turn_started(e: ev.TurnStarted, limit: int) -> str:
    return f"turn {e.turn}{' (plan)' if e.plan else ''}: {e.prompt}"


def _turn_ended(e: ev.TurnEnded, limit: int) -> str:
    cost = f"; ${e.cost_usd:.4f} (running total)" if e.cost_usd is not None else ""
    return (f"turn {e.turn} {e.result}; {e.input_tokens:,} in / {e.output_tokens:,} out"
            f"{cost}" + (f"; {e.message}" if e.message else ""))


def _plan_mode(e: ev.PlanMode, limit: int) -> str:
    return f"{e.mode} {e.state} ({e.source})" + (f": {e.detail}" if e.detail else "")


def _plan_proposed(e: ev.PlanProposed, limit: int) -> str:
    return f"plan {e.decision_id}: {e.plan}"


def _plan_decided(e: ev.PlanDecided, limit: int) -> str:
    text = f"plan {e.decision_id} {e.outcome} by {e.by}"
    if e.mode_after:
        text += f"; next mode {e.mode_after}" + (
            f" for this plan only, then {e.back_to}" if e.back_to else "")
    if e.edited:
        text += "; edited by you" + (f": {e.approved_plan}" if e.approved_plan else "")
    if e.feedback:
        text += f"; feedback: {e.feedback}"
    return text


def _model_switched(e: ev.ModelSwitched, limit: int) -> str:
    return f"{e.from_model or '?'} → {e.to_model or '?'} ({e.why})"


def _question_asked(e: ev.QuestionAsked, limit: int) -> str:
    return f"{e.decision_id}: " + " / ".join(str(q.get("question", "")) for q in e.questions)


def _question_answered(e: ev.QuestionAnswered, limit: int) -> str:
    return f"{e.decision_id} {e.outcome} by {e.by}" + (
        ": " + "; ".join(f"{k} = {v}" for k, v in e.answers.items()) if e.answers else "") + (
        "; notes: " + "; ".join(f"{k}: {v}" for k, v in e.notes.items()) if e.notes else "")


def _tool_requested(e: ev.ToolRequested, limit: int) -> str:
    return f"{e.decision_id} {e.tool} {summarize(e.input, limit)}"


def _tool_decided(e: ev.ToolDecided, limit: int) -> str:
    return f"{e.decision_id} {e.outcome} by {e.by}" + (f": {e.reason}" if e.reason else "")


def _tasks_updated(e: ev.TasksUpdated, limit: int) -> str:
    done = sum(x.get("status") == "completed" for x in e.tasks)
    return f"turn {e.turn}: tasks {done}/{len(e.tasks)}" + "".join(
        f"; [{_BOX.get(x.get('status'), ' ')}] {x.get('subject', '')}" for x in e.tasks)


def _files_rewound(e: ev.FilesRewound, limit: int) -> str:
    return (f"files put back as before turn {e.turn} by {e.by}: {len(e.files)} file(s)"
            + (": " + ", ".join(e.files) if e.files else ""))


def _agent_started(e: ev.AgentStarted, limit: int) -> str:
    return (f"agent {e.agent_id} started{' in the background' if e.background else ''}: "
            f"{e.description}")


def _agent_progress(e: ev.AgentProgress, limit: int) -> str:
    return f"agent {e.agent_id}: {e.activity or e.last_tool or ''} ({e.tokens:,} tokens)"


def _agent_ended(e: ev.AgentEnded, limit: int) -> str:
    return f"agent {e.agent_id} {e.status}" + (f": {e.summary}" if e.summary else "")


def _thought(e: ev.Thought, limit: int) -> str:
    return f"turn {e.turn} thinking: {e.text}"


def _error(e: ev.ErrorEvent, limit: int) -> str:
    return f"{e.kind}: {e.message}"


def _retried(e: ev.ApiRetried, limit: int) -> str:
    if not e.attempt:
        return f"rate limit: {e.reason}"
    of = f" of {e.max_retries}" if e.max_retries else ""
    wait = f", next try in {e.delay_ms / 1000:.1f} s" if e.delay_ms is not None else ""
    return f"retry {e.attempt}{of}: {e.reason}{wait}"


def _fell_back(e: ev.ModelFellBack, limit: int) -> str:
    return (f"model fallback to {e.to_model or '?'}" + (f" from {e.from_model}" if e.from_model
            else "") + (f": {e.reason}" if e.reason else ""))


def _compacted(e: ev.Compacted, limit: int) -> str:
    from ..agent.wording import compaction_line

    return compaction_line(e.trigger, e.pre_tokens, e.post_tokens)


_SUMMARIES: dict[type[ev.EventBase], Callable[[Any, int], str]] = {
    ev.SessionStarted: _session_started,
    ev.TurnStarted: _turn_started,
    ev.TurnEnded: _turn_ended,
    ev.PlanMode: _plan_mode,
    ev.PlanProposed: _plan_proposed,
    ev.PlanDecided: _plan_decided,
    ev.PlanCommented: _fields,
    ev.PlanHandoff: _fields,
    ev.ModelSwitched: _model_switched,
    ev.QuestionAsked: _question_asked,
    ev.QuestionAnswered: _question_answered,
    ev.ToolRequested: _tool_requested,
    ev.ToolDecided: _tool_decided,
    ev.TasksUpdated: _tasks_updated,
    ev.FilesRewound: _files_rewound,
    ev.Thought: _thought,
    ev.AgentStarted: _agent_started,
    ev.AgentProgress: _agent_progress,
    ev.AgentEnded: _agent_ended,
    ev.SessionAsleep: _fields,
    ev.ApiRetried: _retried,
    ev.ModelFellBack: _fell_back,
    ev.Compacted: _compacted,
    ev.McpChanged: lambda e, limit: f"MCP server {e.name}: {e.status}" + (
        f" ({e.error})" if e.error else ""),
    ev.CliUnknown: lambda e, limit: f"unknown message from the CLI: {e.kind} {e.detail}",
    ev.ErrorEvent: _error,
}
"""The one-line summary of each event class (``_fields`` says an event's fields as they are)."""


def check_summaries() -> None:
    """Raise ``LookupError`` naming each event class with no summary (run at import)."""
    ev.check_table(_SUMMARIES, "summary")


check_summaries()


TURN_HEAD = ("turn", "started", "prompt", "result", "cost so far")
"""The columns of :func:`turn_rows`."""


def turn_rows(events: list[Any]) -> list[list[Any]]:
    """One row per turn (see :data:`TURN_HEAD`); the cost is the session's running total
    across CLI processes (each process restarts its own total)."""
    rows: dict[int, list[Any]] = {}
    cost = Cost()
    for e in events:
        if e.type == "turn:started":
            rows[e.turn] = [e.turn, when(e.ts, "%m-%d %H:%M:%S"), summarize(e.prompt, 80),
                            "unfinished", ""]
        elif e.type == "session:started":
            cost = cost.new_process()
        elif e.type == "turn:ended" and e.turn in rows:
            rows[e.turn][3] = e.result + (f": {summarize(e.message, 60)}" if e.message else "")
            if e.cost_usd is not None:
                cost = cost.reported(e.cost_usd)
                rows[e.turn][4] = f"${cost.total:.4f}"
    return list(rows.values())


def history_lines(events: list[Any], st: Any) -> list[str]:
    """The history of a session as plain text lines (turns, then decisions)."""
    out = [f"turn {r[0]} at {r[1]}: {r[2]} [{r[3]}]" for r in turn_rows(events)]
    for d in st.decisions.values():
        if d.kind == "tool":
            what = d.tool or ""
        elif d.kind == "plan":
            what = next(iter((d.plan or "").strip().splitlines()), "")
        else:
            what = "; ".join(str(q.get("question", "")) for q in d.questions)
        out.append(f"{d.kind} {d.id} (turn {d.turn}): {decision_status(d)}"
                   + (f" - {summarize(what, 80)}" if what else ""))
    return out


_COLOR = {"approved": SUCCESS, "expired": ERROR}


def history_html(events: list[Any], st: Any) -> str:
    """The resumed session's history as one safe HTML block (``text/markdown``): the turns as
    a table, then one box per decision with how it ended (``st`` is the folded state). Plans
    render through the safe Markdown path, everything else is escaped text."""
    parts: list[str] = []
    rows = turn_rows(events)
    if rows:
        parts.append(table_html(TURN_HEAD, rows, cls="pw-history"))
    parts.extend(_decision_html(d) for d in st.decisions.values())
    if not parts:
        parts.append("<i>No turns yet.</i>")
    return html_block("\n".join([f'<div style="{WRAP_STYLE}">', *parts, "</div>"]),
                      "pw-history")


def _decision_html(d: Any) -> str:
    """One past decision: what was asked, and how it ended."""
    color = _COLOR.get(d.status, MUTED)
    title = {"plan": "Plan", "question": "Questions", "tool": f"Tool {d.tool or ''}"}[d.kind]
    status = (f'<span class="pw-history-status" style="color:{color}"><b>{escape(title)} '
              f"{escape(d.id)}</b> (turn {d.turn}, asked {escape(when(d.ts_asked, '%H:%M:%S'))})"
              f": <b>{escape(decision_status(d))}</b></span>")
    return (f'<div class="pw-history-decision" style="border:1px dashed {color};'
            f'padding:4px 8px;margin:4px 0">\n{status}\n{_asked(d)}\n</div>')


def _asked(d: Any) -> str:
    if d.kind == "plan":
        return render_html(d.plan or "")
    if d.kind == "question":
        text = "; ".join(str(q.get("question", "")) for q in d.questions)
        if d.answers:
            text += " → " + "; ".join(f"{k} = {v}" for k, v in d.answers.items())
        if d.notes:
            text += " (notes: " + "; ".join(f"{k}: {v}" for k, v in d.notes.items()) + ")"
        return f"<div>{escape(summarize(text, 300))}</div>"
    return f"<div><code>{escape(summarize(dict(d.input or {}), 300))}</code></div>"
