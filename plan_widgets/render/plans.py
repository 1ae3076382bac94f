"""The project's kept plans (:mod:`plan_widgets.store.plans`) as a person reads them: a row
of the list, a read-only card (safe HTML), and the same as text for a terminal.

A kept plan is model text like any plan: it goes through the one render path
(:func:`~.markdown.render_html`), its Changes against another through :mod:`.diff`.
"""

from __future__ import annotations

from typing import Any

from .decision import title_html, wrapping
from .diff import diff_html, diff_markdown
from .history import when
from .look import MUTED
from .markdown import SMALL_STYLE, escape, render_html
from .paths import home_short

HEAD = ["id", "status", "session", "proposed", "plan"]
FROM_PLAN = "%%claude --from-plan {id}"


def status_text(k: Any) -> str:
    """Its status, and whether the text in force is the user's edit."""
    return k.status + (", edited by you" if k.edited else "")


def row(k: Any) -> list[str]:
    """Its row in :data:`HEAD`'s columns (plain text: a table escapes it)."""
    title = k.text.strip().splitlines()[0].lstrip("#").strip() if k.text.strip() else k.title
    return [k.id, status_text(k), f"{k.session} ({k.session_id[:8]})", when(k.proposed),
            title[:100]]


def label(k: Any) -> str:
    """How a list of choices names it: ``<id> · <status> · <title>``."""
    return f"{k.id} · {k.status} · {k.title[:60]}"


def _facts(k: Any) -> list[str]:
    facts = [f"session {k.session} ({k.session_id[:8]})", f"proposed {when(k.proposed)}"]
    if k.decided:
        facts.append(f"{k.status} {when(k.decided)}")
    if k.mode_after:
        facts.append(f"then mode {k.mode_after}")
    if k.revises:
        facts.append(f"revises {k.revises}")
    if k.carried_out_in:
        facts.append("carried out in " + ", ".join(s[:8] for s in k.carried_out_in))
    return facts


def card_title(k: Any) -> str:
    return f"Kept plan {k.id}: {status_text(k)}"


def card_html(k: Any) -> str:
    """The read-only card's head as safe HTML: title, facts, the plan in force, how to carry
    it out. (Nothing on it decides: it is the plan as kept.)"""
    small = f'<div style="{SMALL_STYLE};color:{MUTED}">'
    parts = [title_html(card_title(k)), small + escape(" · ".join(_facts(k))) + "</div>"]
    if k.feedback:
        parts.append(small + "Sent back with: " + escape(k.feedback) + "</div>")
    parts.append(render_html(k.text, card=True))
    if k.plan_file:
        parts.append(small + f"The CLI's plan file then: <code>{escape(home_short(k.plan_file))}"
                     "</code> (the CLI rewrites it for each revision)</div>")
    parts.append(small + "To carry it out in a new conversation: <code>"
                 + escape(FROM_PLAN.format(id=k.id)) + "</code></div>")
    return wrapping("".join(parts))


def changes_html(k: Any, other: Any) -> str:
    """The Changes from kept plan ``other`` to ``k`` (safe HTML)."""
    return diff_html(other.text, k.text, against=f"plan {other.id} ({other.status})")


def card_text(k: Any, other: Any = None) -> str:
    """The card as Markdown text (a terminal, a saved notebook without widgets)."""
    lines = [f"**{card_title(k)}**", "", " · ".join(_facts(k)), ""]
    if k.feedback:
        lines += [f"Sent back with: {k.feedback}", ""]
    if other is not None:
        lines += [f"Changes from plan {other.id} ({other.status}):", "",
                  diff_markdown(other.text, k.text, f"plan {other.id}", f"plan {k.id}"), ""]
    return "\n".join([*lines, k.text, "", f"To carry it out: `{FROM_PLAN.format(id=k.id)}`"])
