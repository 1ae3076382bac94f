"""Comments on a plan's lines as the card and its static copy show them (issue 22, point 2;
the rules in :mod:`plan_widgets.agent.comments`; made by clicking a line: :mod:`.plan_lines`).

The comments show as one rendered list below the plan, on the card and in its static copy; a
revision's Changes view shows each comment right below the line it was about, saying whether
the revision changed that line.
"""

from __future__ import annotations

from ...agent.comments import PlanComment
from ...agent.decisions import PlanDecision
from ...render.look import COMMENT, SUCCESS, WARN
from ...render.markdown import SMALL_STYLE, escape, plan_line_html

NOTE_STYLE = ("display:block;white-space:normal;word-break:normal;overflow-wrap:break-word;"
              "margin:2px 0 6px 2.2em;padding:3px 8px;"
              f"{COMMENT};font-family:var(--jp-ui-font-family,sans-serif);font-size:0.95em")


def where(c: PlanComment) -> str:
    """What a comment is about, as the person saw it: a section's title, or the line's text
    (the plan shows no line numbers: issue 42, point 9)."""
    return f"Section “{c.quote.lstrip('#').strip()}”" if c.section else "On the line"


def comments_html(d: PlanDecision) -> str:
    """The plan's own comments as safe HTML (empty when it has none)."""
    if not d.comments:
        return ""
    sent = d.outcome is not None and d.outcome.status == "rejected"
    head = "Your comments (sent with Keep planning)" if sent else "Your comments"
    items = "".join(  # the line as it reads in the plan (a section: its title says it)
        f'<li class="pw-comment"><b>{escape(where(c))}</b>'
        + ("" if c.section else f": <q>{plan_line_html(c.quote)}</q>")
        + f"<br>{escape(c.note)}</li>" for c in sorted(d.comments, key=lambda c: c.line))
    return (f'<div class="pw-comments" style="margin:6px 0"><div style="{SMALL_STYLE}">'
            f'{escape(head)}</div><ul style="margin:2px 0 4px 0;padding-left:1.4em">{items}'
            "</ul></div>")


def revision_notes(d: PlanDecision) -> dict[int, str]:
    """For a revision's Changes view: each comment on the previous plan as safe HTML, keyed
    by the previous plan's line it was about, saying whether this revision changed it."""
    out: dict[int, str] = {}
    for c, hit in d.previous_comments():
        state = ("changed by this revision" if hit else "not changed by this revision")
        color = SUCCESS if hit else WARN
        out[c.line] = out.get(c.line, "") + (
            f'<span class="pw-comment-note" style="{NOTE_STYLE}"><b>Your comment:</b> '
            f'{escape(c.note)} '
            f'<small style="color:{color}">({escape(state)})</small></span>')
    return out


def comments_markdown(d: PlanDecision) -> list[str]:
    """The comments as text lines (the text fallback and the terminal)."""
    lines: list[str] = []
    for c in sorted(d.comments, key=lambda c: c.line):
        lines.append(f"- {where(c)}: > {c.quote}\n  {c.note}")
    return ["Your comments:", "", *lines] if lines else []
