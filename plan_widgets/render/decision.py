"""One description of a decision, and the words every form of it shares.

A decision shows in three forms: its live card, its static card (what a finished turn leaves
in the notebook) and its terminal form. Each kind (:mod:`plan_widgets.widgets.kinds`) draws
what it asks; what they all say the same way starts from :class:`Described`: who asks (a
subagent, or the main agent), since when, until when, and how it ended. Here too are the plain
text helpers the terminal needs, so it imports no widget module (a tool's suggested
updates in words: :mod:`.suggestions`).

Safe HTML out, everything untrusted escaped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..agent.decisions import Decision, Outcome, PlanDecision
from .agents import asker
from .look import CARD_TITLE_STYLE, ERROR, PLAN, SMALL_STYLE, SUCCESS, WARN, WRAP_STYLE
from .markdown import escape
from .outcomes import outcome_parts


@dataclass(frozen=True)
class Described:
    """What every form of a decision says alike, taken from the live decision at one moment."""

    kind: str
    """The decision's kind (``plan``, ``question``, ``tool``): the card's colour and class."""
    asker: str
    """The subagent that asks ("" for the main agent)."""
    asked_at: float
    expires_at: float | None
    outcome: Outcome | None
    superseded: bool
    """A plan the model revised before anyone decided it."""
    fresh: bool
    """A plan approved into a new conversation (agent/handoff)."""

    @classmethod
    def of(cls, d: Decision) -> Described:
        return cls(kind=d.kind, asker=asker(d) or "", asked_at=d.asked_at, expires_at=d.expires_at,
                   outcome=d.outcome,
                   superseded=isinstance(d, PlanDecision) and d.superseded,
                   fresh=bool(getattr(d, "fresh", False)))


def when(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def paused_at(kind: str) -> str:
    """The waiting line of a copy that may be read later (a saved notebook, a page that loaded
    the display): a past-tense sentence, dated, that stays true whatever was decided after it
    ("At 12:03:04 the turn paused for your decision (plan) on the card above."; issue 36).
    A page that shows this line while the card is live elsewhere (a collaborator's page of a
    notebook this server has not signed: JupyterLab renders widgets only in trusted outputs,
    jupyterlab#11435) gets the live card by a reload (docs/cli.md#collaboration), so the
    line says so, with the condition that keeps it true."""
    return (f"At {when(time.time())} the turn paused for your decision ({kind}) on the card "
            "above. No buttons on it while its kernel runs? Reload the page to decide here.")


def title_html(text: str) -> str:
    """A card's title line (safe HTML)."""
    return f'<div class="pw-card-title" style="{CARD_TITLE_STYLE}">{escape(text)}</div>'


def wrapping(safe_html: str) -> str:
    """``safe_html`` in a block whose long words break instead of widening the card."""
    return f'<div style="{WRAP_STYLE}">{safe_html}</div>'


def asker_html(d: Described) -> str:
    """The card's first line naming the subagent that asks (safe HTML; empty for the main
    agent)."""
    return (f'<div class="pw-card-asker" style="{SMALL_STYLE};color:{PLAN}">↳ '
            f"{escape(d.asker)}</div>") if d.asker else ""


def status_html(d: Described, live: bool = False) -> str:
    """The card's status line (safe HTML): waiting since when (``live``: the live card, which
    changes when it ends), or how it ended. A static copy of an open decision (a live
    display's fallback, kept in a notebook saved while it waited) says only what stays true:
    when it was asked, and that it was open at the time the copy was made (issue 36)."""
    o = d.outcome
    if o is None and d.superseded:
        return "<span>Superseded by a revised plan below</span>"
    if o is None and not live:
        return (f'<span style="color:{WARN}">Asked at {when(d.asked_at)}; not decided as of '
                f"{when(time.time())}</span>")
    if o is None:
        until = f"; expires at {when(d.expires_at)}" if d.expires_at else ""
        return (f'<span style="color:{WARN}">Waiting for you (since {when(d.asked_at)}'
                f"{until})</span>")
    text, extra = outcome_parts(o)
    color = SUCCESS if o.granted else ERROR
    sup = " · superseded by a revised plan below" if d.superseded else ""
    if d.fresh:  # issue 22: agent/handoff
        sup += " · started fresh: the plan runs in a new conversation"
    detail = f" ({escape('; '.join(extra))})" if extra else ""
    return (f'<span style="color:{color}"><b>{escape(text)}</b>{detail} at {when(o.at)}'
            f"{escape(sup)}</span>")


def state_text(d: Described) -> str:
    """The status line as plain text (the Markdown fallback's last line, in italics)."""
    o = d.outcome
    if o is None:  # (as status_html says it)
        return ("superseded by a revised plan" if d.superseded
                else f"asked at {when(d.asked_at)}; not decided as of {when(time.time())}")
    text, extra = outcome_parts(o)
    state = text + (f" ({'; '.join(extra)})" if extra else "") + f" at {when(o.at)}"
    if d.fresh:  # issue 22: agent/handoff
        state += "; started fresh: the plan runs in a new conversation"
    return state
