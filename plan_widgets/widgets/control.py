"""The control bar: plan-mode toggle, effective mode and model markers, state, interrupt.

A session has one bar. It is live in the newest cell that shows it; when a later cell shows
it, the earlier cell keeps a static line with the mode and model its turn ran under.

A cell's bar display is updated in place ONCE, when a later cell takes the bar, and never
while it is the newest (issue 36, measured with jupyter-collaboration 5.0.4, docs/cli.md
#collaboration): JupyterLab applies an update of a cell's output that is not the cell's
last by removing it and appending the new one at the end, in every other page of a shared
notebook. The bar is output 0 and the turn output 1, so an update of the bar while the turn
still changes gave a second person ``[turn, turn]``: the card twice, no bar. So the live
bar's fallback says only the session's name (never stale), and what a turn ran under is
said at its end in the turn's own record (its footer, :meth:`ran_words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import ipywidgets as w
from IPython.display import display

from ..agent.checklist import progress
from ..agent.mode_names import mode_title, mode_tooltip
from ..agent.tasks import spawn
from ..render.look import BADGE_STYLE, ERROR, INFO, MUTED, PLAN, SUCCESS, TEXT, WARN
from ..render.markdown import escape, html_block
from .agents import bar_agents
from .rewind import bar_rewind
from .shared import (
    close_tree,
    look,
    on_change,
    on_click,
    shared,
    update_display,
    warm,
    widget_bundle,
)

if TYPE_CHECKING:
    from ..agent.session import Session

_GREY = MUTED
_STATE_LABELS = {
    "idle": ("idle", MUTED),
    "starting": ("starting…", MUTED),
    "working": ("working…", INFO),
    "waiting": ("waiting for you", WARN),
    "asleep": ("asleep", MUTED),
    "dead": ("ended", ERROR),
    "closed": ("closed", MUTED),
}


def _badge(label: str, value: str, color: str = TEXT, title: str = "") -> str:
    return (
        f'<span title="{escape(title)}" style="{BADGE_STYLE.format(color=color)}">'
        f"{escape(label)} <b>{escape(value)}</b></span>"
    )


def progress_badges(st: Any, ctx: Any) -> str:
    """The task list's progress ("tasks 3/5", while the turn that keeps it is the latest) and
    how full the context is ("ctx 12%", its categories in the tooltip)."""
    out = []
    tasks = getattr(st, "tasks", ())
    if tasks and getattr(st, "tasks_turn", None) == getattr(st, "turns", None):
        done, total = progress(tasks)
        left = ", ".join(str(t.get("subject", "")) for t in tasks
                         if t.get("status") != "completed")
        out.append(_badge("tasks", f"{done}/{total}", SUCCESS if done == total else INFO,
                          f"the agent's task list; not done: {left}" if left else "all done"))
    if ctx is not None:
        color = ERROR if ctx.percentage >= 80 else TEXT
        out.append(_badge("", ctx.label, color, "\n".join(ctx.lines())))
    return " ".join(out)


def mcp_badge(trouble: tuple[tuple[str, str, str | None], ...]) -> str:
    """``MCP ✗ teamdb``: the servers that failed or need authentication (why, in the
    tooltip; ``%claude mcp`` lists them all)."""
    if not trouble:
        return ""
    names = ", ".join(n for n, _s, _e in trouble)
    tip = "\n".join(f"{n}: {st}" + (f" ({e})" if e else "") for n, st, e in trouble)
    return _badge("MCP ✗", names, ERROR, f"{tip}\n%claude mcp lists every server")


class ControlBar(w.HBox):
    """One per session, shown in every ``%%claude`` cell of it (all views stay in sync)."""

    _current: ClassVar[dict[str, ControlBar]] = {}  # by session name: the newest shown

    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        warm()  # the cards' shared models, once per kernel, before any card is waited for
        self.toggle = w.ToggleButton(
            value=False, description="Plan mode", icon="map", tooltip="Toggle plan mode live",
            **look("auto", "toggle"),
        )
        self.mode_marker = w.HTML(**look("layout", "html"))
        self.model_marker = w.HTML(**look("layout", "html"))
        self.state_marker = w.HTML(**look("layout", "html"))
        self.interrupt_button = w.Button(
            description="Interrupt", icon="stop", tooltip="Interrupt the running turn",
            **look("auto", "button"),
        )
        super().__init__(
            # the cards' keep-place: a click on the bar leaves the keyboard where it was
            [self.toggle, self.mode_marker, self.model_marker, self.state_marker,
             self.interrupt_button, shared("keep-place")],
            layout=shared("bar"), _dom_classes=("pw-control-bar", "pw-keeps-place"), **kwargs,
        )
        self._syncing = False
        self.rewind: Any = None  # the latest turn's Rewind files, once a turn changed files
        self._last: tuple[Any, ...] = ()
        self._handle: Any = None  # the display in the newest cell that shows the bar
        self._ran_under: tuple[str | None, str | None] | None = None
        self.closed = False
        on_change(self.toggle, self._on_toggle, "value")
        on_click(self.interrupt_button, self._on_interrupt)
        session.subscribe(lambda s: self.refresh())
        self.refresh()

    # -- where it is shown -------------------------------------------------------------------
    def show(self) -> Any:
        """Show the bar in the current cell; returns that display's handle. The cell that
        showed it before (or the bar of an earlier session of the same name) keeps a static
        line with the mode and model it ran under."""
        prev = ControlBar._current.get(self.session.name)
        if prev is not None and prev is not self:
            prev.retire()
        elif self._handle is not None:
            self._static(self._handle, self._ran_under)
        ControlBar._current[self.session.name] = self
        self._ran_under = None
        self._handle = display(self.mimebundle(), raw=True, display_id=True)
        return self._handle

    def ran_under(self, handle: Any) -> None:
        """A turn shown below ``handle`` ended: remember the mode and model it ran under, for
        the static line its cell keeps. (A cell whose bar is static already is not updated
        again: a second in-place update of a cell's first output removes its turn in a
        collaborator's page; the turn's own footer says what it ran under.)"""
        if handle is self._handle:
            st = self.session.state
            self._ran_under = (st.mode, st.model)

    def ran_words(self) -> str:
        """"mode Plan · model …" as the CLI reported them now ("" for what it has not)."""
        st = self.session.state
        return " · ".join(([f"mode {mode_title(st.mode)}"] if st.mode else [])
                          + ([f"model {st.model}"] if st.model else []))

    def retire(self) -> None:
        """The session is gone from view: its last cell keeps the static line, and the bar's
        widget models close."""
        if self.closed:
            return
        if self._handle is not None:
            self._static(self._handle, self._ran_under)
        self.closed = True
        close_tree([self])
        if ControlBar._current.get(self.session.name) is self:
            del ControlBar._current[self.session.name]

    def static_line(self, ran_under: tuple[str | None, str | None] | None = None) -> str:
        """The static line (safe HTML): the mode and model a cell's turn ran under."""
        # Plain on purpose: every finished cell keeps one, so its bytes count in a saved
        # notebook (docs/benchmarks.md: the badges' inline styles were 569 bytes a cell).
        st = self.session.state
        mode, model = ran_under or (st.mode, st.model)
        # what the CLI has not reported (yet) is left out, not said as "?" (issue 36)
        said = "".join([
            f' · mode <b title="{escape(mode_tooltip(mode))}">{escape(mode_title(mode))}</b>'
            if mode else "",
            f" · model <b>{escape(model)}</b>" if model else ""])
        return html_block(
            f'<small class="pw-control-line">session {escape(self.session.name)}{said}</small>',
            "pw-html")

    def plain_line(self, ran_under: tuple[str | None, str | None] | None = None) -> str:
        """The static line as plain text ("session default · mode Plan · model …": the name
        said as the session's, the mode as the CLI's UI names it, like the live marker)."""
        st = self.session.state
        mode, model = ran_under or (st.mode, st.model)
        return (f"session {self.session.name}"
                + (f" · mode {mode_title(mode)}" if mode else "")
                + (f" · model {model}" if model else ""))

    def _static(self, handle: Any, ran_under: tuple[str | None, str | None] | None) -> None:
        update_display(handle, {"text/markdown": self.static_line(ran_under),
                                "text/plain": self.plain_line(ran_under)}, "control bar")

    def mimebundle(self) -> dict[str, Any]:
        """The live bar, with a line for frontends without widgets that stays true while the
        bar is live: the session's name (the module's doc says why it is not updated)."""
        line = html_block(f'<small class="pw-control-line">session '
                          f"{escape(self.session.name)}</small>", "pw-html")
        return widget_bundle(self, text_markdown=line,
                             text_plain=f"session {self.session.name}")

    # -- user actions ----------------------------------------------------------------------
    def _on_toggle(self, change: dict[str, Any]) -> None:
        if self._syncing or self.closed:
            return
        self._spawn(self.session.set_plan_mode(bool(change["new"])))

    def _on_interrupt(self, _b: Any) -> None:
        self._spawn(self.session.interrupt())

    def _spawn(self, coro: Any) -> None:
        spawn(coro)

    # -- rendering from state ----------------------------------------------------------------
    def refresh(self) -> None:
        """Render from the session's folded state (effective values, pending requests)."""
        if self.closed:
            return
        bar_agents(self)  # "agents N" and their list, once the session had one (agents.py)
        s = self.session
        st = s.state
        status = s.status
        ctx = getattr(s, "context", None)
        files_turn = getattr(getattr(s, "runner", None), "files_turn", None)
        health = getattr(getattr(s, "runner", None), "health", None)
        note = health.bar_note if health is not None else None
        trouble = tuple(health.mcp_trouble()) if health is not None else ()
        back_to = getattr(st, "back_to", None)  # approved for one plan only (agent/plan_scope)
        key = (st.mode, st.requested_mode, st.refused, back_to, st.model, status,
               s.plan_in_force, ctx,
               getattr(st, "tasks", ()), getattr(st, "tasks_turn", 0), getattr(st, "turns", 0),
               files_turn, note, trouble)
        if key == self._last:
            return
        self._last = key
        bar_rewind(self)  # Rewind files for the latest turn that changed files (widgets.rewind)
        mode = st.mode or "?"
        if st.requested_mode and st.requested_mode != st.mode:
            mode_html = _badge("mode", f"{mode_title(mode)} → {mode_title(st.requested_mode)}…",
                               WARN, f"{mode} → {st.requested_mode} (SDK names): "
                               "requested, not yet confirmed by the CLI")
        elif st.refused:
            mode_html = _badge("mode", f"{mode_title(mode)} (refused: {st.refused})", ERROR,
                               f"{mode} (SDK name): the CLI refused the last mode change")
        elif st.mode is None:  # nothing reported yet (starting, or it never started)
            mode_html = _badge("mode", "?", MUTED, "not reported by the CLI yet")
        elif back_to and mode != "plan":
            mode_html = _badge("mode", f"{mode_title(mode)} · this plan only", SUCCESS,
                               f"{mode_tooltip(mode)}; confirmed by the CLI; for this plan "
                               f"only: back to {mode_title(back_to)} once its work ends")
        else:
            color = PLAN if mode == "plan" else SUCCESS
            mode_html = _badge("mode", mode_title(mode), color,  # the CLI's UI names (issue 22)
                               f"{mode_tooltip(mode)}; confirmed by the CLI")
        self.mode_marker.value = mode_html
        self.model_marker.value = _badge("model", st.model or "?", TEXT,
                                         "the model that last answered")
        label, color = _STATE_LABELS.get(status, (status, TEXT))
        if note and status == "working":  # "retrying 2/10…", "compacting…"
            label, color = note, WARN
        # the state, then "tasks 3/5" and "ctx 12%" once there are any (no model more), and
        # the MCP servers that failed or need authentication
        self.state_marker.value = " ".join(
            x for x in (_badge("", label, color), progress_badges(st, ctx), mcp_badge(trouble))
            if x)
        self._syncing = True
        try:
            want = st.mode == "plan" if not st.requested_mode else st.requested_mode == "plan"
            self.toggle.value = bool(want)
        finally:
            self._syncing = False
        self.interrupt_button.disabled = status not in ("working", "waiting")
        self.toggle.disabled = status in ("dead", "closed")

