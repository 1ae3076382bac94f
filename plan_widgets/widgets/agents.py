"""The control bar's agents: ``agents N`` (those running), and on a click their list.

Measured (docs/cli.md#agents, CLI 2.1.332): subagents run in the background by default, so a cell
returns while they work, and the CLI runs up to 20 at once. The bar says how many run in one
button, whatever their number (the bar stays one line); clicked, a list opens below the bar's
line: each agent's description, elapsed time, last tool and tokens with a Stop button (the
CLI's ``stop_task``), and the last few that ended with their result summary. The list scrolls
beyond about six rows. Nothing shows while the session never had an agent, and the list's
widgets are made only when it is opened.

Descriptions and summaries are the model's words: escaped here.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import ipywidgets as w

from ..agent.tasks import spawn
from ..render.agents import agent_said, agent_state
from ..render.look import ERROR, MUTED
from ..render.markdown import escape, html_block, summarize
from .shared import close_tree, look, on_click, shared

ENDED_SHOWN = 5
"""Ended agents the list keeps (the newest), with their summaries."""
_ROW_HEIGHT = 30  # px: a row with a button
LIST_HEIGHT = f"{6 * _ROW_HEIGHT + 8}px"


def row_html(rec: Any, now: float | None = None) -> str:
    """One agent in the list (safe HTML)."""
    mark = "" if rec.running else ("✓ " if rec.status == "completed" else "✗ ")
    state = agent_state(rec, now)
    said = (f' <span style="color:{MUTED}">— {escape(summarize(agent_said(rec), 200))}</span>'
            if agent_said(rec) and not rec.running else "")
    return (f'<div style="line-height:1.45;overflow-wrap:break-word">{mark}'
            f"<b>{escape(summarize(rec.description or rec.id, 80))}</b> "
            f'<small style="color:{MUTED}">{escape(state)}</small>{said}</div>')


def shown_agents(agents: tuple[Any, ...]) -> list[Any]:
    """Running agents first (oldest first), then the last few that ended (newest first)."""
    running = [a for a in agents if a.running]
    ended = sorted((a for a in agents if not a.running), key=lambda a: a.ended or 0,
                   reverse=True)
    return running + ended[:ENDED_SHOWN]


class AgentsPanel:
    """The bar's ``agents N`` button, and the list it opens."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.button = w.Button(description="agents 0", icon="users", **look("auto", "button"),
                                tooltip="The session's subagents (click for the list)")
        on_click(self.button, lambda _b: self.toggle())
        self.list: w.VBox | None = None
        self.note: w.HTML | None = None
        self.rows: dict[str, tuple[w.Box, w.HTML, w.Button | None]] = {}
        self.opened = False
        self.agents: tuple[Any, ...] = ()
        self._ticking = False

    def widgets(self) -> list[w.Widget]:
        return [x for x in (self.button, self.list) if x is not None]

    def update(self, agents: tuple[Any, ...]) -> None:
        """Show the session's agents as they are now."""
        self.agents = agents
        running = sum(1 for a in agents if a.running)
        self.button.description = f"agents {running}"
        self.button.button_style = "info" if running else ""
        self.button.style = shared("button-info" if running else "button")
        self.button.tooltip = (f"{running} subagent{'s' if running != 1 else ''} running, "
                               f"{len(agents) - running} ended (click for the list)")
        if self.opened:
            self._fill()

    def toggle(self) -> None:
        self.opened = not self.opened
        if self.opened:
            self._fill()
        elif self.list is not None:
            self.list.layout.display = "none"

    # -- the list --------------------------------------------------------------------------
    def _fill(self) -> None:
        if self.list is None:
            self.list = w.VBox(layout=w.Layout(flex="1 1 100%", min_width="0",
                                               max_height=LIST_HEIGHT, overflow="auto"),
                               _dom_classes=("pw-agents",))
            _place(self.bar, self)
        self.list.layout.display = "flex"
        now = time.time()
        shown = shown_agents(self.agents)
        keep = {a.id for a in shown}
        for gone in [k for k in self.rows if k not in keep]:
            close_tree([self.rows.pop(gone)[0]])
        kids: list[w.Widget] = []
        for rec in shown:
            kids.append(self._row(rec, now))
        if not shown:
            self._say("<small>No agents.</small>")
        if self.note is not None:
            kids.append(self.note)
        if tuple(kids) != self.list.children:
            self.list.children = tuple(kids)
        if any(a.running for a in self.agents):
            self._tick_soon()

    def _tick_soon(self) -> None:
        """While the list is open and agents run, their elapsed time moves once a second
        (agent events come only when an agent uses a tool)."""
        if self._ticking:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test building widgets by hand): no ticking
            return
        self._ticking = True
        loop.call_later(1.0, self._tick)

    def _tick(self) -> None:
        self._ticking = False
        if self.opened and not getattr(self.bar, "closed", False):
            self._fill()

    def _row(self, rec: Any, now: float) -> w.Box:
        entry = self.rows.get(rec.id)
        if entry is None:
            info = w.HTML(**look("auto", "html"))
            stop = None
            if rec.running:
                stop = w.Button(description="Stop", icon="stop", **look("auto", "button"),
                                tooltip="Stop this agent (the CLI's stop_task)")
                on_click(stop, lambda _b, i=rec.id: self.stop(i))
            row = w.HBox([x for x in (info, stop) if x is not None], layout=shared("bar"))
            entry = self.rows[rec.id] = (row, info, stop)
        row, info, stop = entry
        value = html_block(row_html(rec, now), "pw-html")
        if info.value != value:
            info.value = value
        if stop is not None and not rec.running:  # ended: no Stop any more
            row.children = (info,)
            close_tree([stop])
            self.rows[rec.id] = (row, info, None)
        return row

    def _say(self, safe_html: str) -> None:
        """The list's last line (made when first needed)."""
        if self.note is None:
            self.note = w.HTML(**look("full", "html"))
        self.note.value = html_block(safe_html, "pw-html")

    def stop(self, agent_id: str) -> None:
        """Stop one agent; a failure is said in the list's last line."""
        entry = self.rows.get(agent_id)
        if entry is not None and entry[2] is not None:
            entry[2].disabled = True
            entry[2].description = "Stopping…"

        def done(t: Any) -> None:
            e = None if t.cancelled() else t.exception()
            if e is None:
                return
            if entry is not None and entry[2] is not None:
                entry[2].disabled = False
                entry[2].description = "Stop"
            text = " ".join(str(e).split()) or type(e).__name__
            self._say(f'<small style="color:{ERROR}">Could not stop it: {escape(text[:300])}'
                      "</small>")
            if self.opened:
                self._fill()

        spawn(self.bar.session.stop_agent(agent_id)).add_done_callback(done)


def _place(bar: Any, panel: AgentsPanel) -> None:
    """The button after the bar's other widgets, the list (a line of its own) last."""
    base = [c for c in bar.children if c not in panel.widgets()]
    order = (*base, *panel.widgets())
    if order != bar.children:
        bar.children = order


def bar_agents(bar: Any) -> None:
    """Keep the control bar's ``agents N`` on the session's agents (nothing until it had
    one)."""
    agents = tuple(getattr(bar.session.state, "agents", ()) or ())
    panel: AgentsPanel | None = getattr(bar, "agents_panel", None)
    if panel is None:
        if not agents:
            return
        panel = bar.agents_panel = AgentsPanel(bar)
    if agents is panel.agents or agents == panel.agents and not panel.opened:
        _place(bar, panel)
        return
    panel.update(agents)
    _place(bar, panel)
