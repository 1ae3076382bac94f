"""The control bar: plan-mode toggle, effective mode and model markers, state, interrupt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..agent.tasks import spawn
from ..render.markdown import escape

if TYPE_CHECKING:
    from ..agent.session import Session

_STATE_LABELS = {
    "idle": ("idle", "#6b7280"),
    "starting": ("starting…", "#6b7280"),
    "working": ("working…", "#2563eb"),
    "waiting": ("waiting for you", "#b45309"),
    "dead": ("ended", "#b91c1c"),
    "closed": ("closed", "#6b7280"),
}


def _badge(label: str, value: str, color: str = "#374151", title: str = "") -> str:
    return (
        f'<span title="{escape(title)}" style="border:1px solid {color};border-radius:4px;'
        f'padding:1px 6px;color:{color};font-size:12px;white-space:nowrap">'
        f"{escape(label)} <b>{escape(value)}</b></span>"
    )


class ControlBar(w.HBox):
    """One per session, shown in every ``%%claude`` cell of it (all views stay in sync)."""

    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.toggle = w.ToggleButton(
            value=False, description="Plan mode", icon="map", tooltip="Toggle plan mode live",
            layout=w.Layout(width="auto"),
        )
        self.mode_marker = w.HTML()
        self.model_marker = w.HTML()
        self.state_marker = w.HTML()
        self.interrupt_button = w.Button(
            description="Interrupt", icon="stop", tooltip="Interrupt the running turn",
            layout=w.Layout(width="auto"),
        )
        super().__init__(
            [self.toggle, self.mode_marker, self.model_marker, self.state_marker,
             self.interrupt_button],
            layout=w.Layout(align_items="center", gap="8px", flex_flow="row wrap"),
            **kwargs,
        )
        self.add_class("pw-control-bar")
        self._syncing = False
        self._last: tuple[Any, ...] = ()
        self.toggle.observe(self._on_toggle, "value")
        self.interrupt_button.on_click(self._on_interrupt)
        session.subscribe(lambda s: self.refresh())
        self.refresh()

    # -- user actions ----------------------------------------------------------------------
    def _on_toggle(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        self._spawn(self.session.set_plan_mode(bool(change["new"])))

    def _on_interrupt(self, _b: Any) -> None:
        self._spawn(self.session.interrupt())

    def _spawn(self, coro: Any) -> None:
        spawn(coro)

    # -- rendering from state ----------------------------------------------------------------
    def refresh(self) -> None:
        """Render from the session's folded state (effective values, pending requests)."""
        s = self.session
        st = s.state
        status = s.status
        key = (st.mode, st.requested_mode, st.refused, st.model, status, s.plan_in_force)
        if key == self._last:
            return
        self._last = key
        mode = st.mode or "?"
        if st.requested_mode and st.requested_mode != st.mode:
            mode_html = _badge("mode", f"{mode} → {st.requested_mode}…", "#b45309",
                               "requested, not yet confirmed by the CLI")
        elif st.refused:
            mode_html = _badge("mode", f"{mode} (refused: {st.refused})", "#b91c1c",
                               "the CLI refused the last mode change")
        elif st.mode is None:  # nothing reported yet (starting, or it never started)
            mode_html = _badge("mode", "?", "#6b7280", "not reported by the CLI yet")
        else:
            color = "#7c3aed" if mode == "plan" else "#047857"
            mode_html = _badge("mode", mode, color, "confirmed by the CLI")
        self.mode_marker.value = mode_html
        self.model_marker.value = _badge("model", st.model or "?", "#374151",
                                         "the model that last answered")
        label, color = _STATE_LABELS.get(status, (status, "#374151"))
        self.state_marker.value = _badge("", label, color)
        self._syncing = True
        try:
            want = st.mode == "plan" if not st.requested_mode else st.requested_mode == "plan"
            self.toggle.value = bool(want)
        finally:
            self._syncing = False
        self.interrupt_button.disabled = status not in ("working", "waiting")
        self.toggle.disabled = status in ("dead", "closed")
