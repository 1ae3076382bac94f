"""Mode and model tracking: what was asked, what the CLI confirmed, and what the gate enforces.

Markers follow the CLI's reports, never the request ("effective, not requested"): a request is
logged as ``requested``, the CLI's status message as ``effective``, a failed control request as
``refused``. The gate's view of plan mode (:attr:`Modes.plan_in_force`) runs ahead of the CLI in
one direction only: it starts refusing as soon as plan mode is asked for, and stops as soon as
the user approves or toggles off (what follows then goes to the user, never straight through).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from .. import model as ev
from ..model.errors import OptionError, SessionError
from ..model.events import ModeSource
from ..model.options import ALL_MODES, SessionOptions, check_allowed
from . import wording
from .plan_scope import PlanScope
from .seam import AgentClient
from .tasks import spawn

_SOURCES: tuple[ModeSource, ...] = ("user", "model", "approval", "resume", "start",
                                     "plan_end")


class ModeHost(Protocol):
    """What mode tracking needs from its session."""

    @property
    def state(self) -> ev.SessionState: ...
    @property
    def options(self) -> SessionOptions: ...
    @property
    def connected(self) -> bool: ...
    @property
    def client(self) -> AgentClient | None: ...

    def update_options(self, **changes: Any) -> None: ...
    def emit(self, event: ev.Event) -> ev.Event: ...
    def marker(self, text: str) -> None: ...
    def check_alive(self) -> None: ...
    async def control(self, aw: Awaitable[Any], what: str) -> Any: ...


class Modes:
    """The session's permission mode and model, as asked and as confirmed."""

    def __init__(self, host: ModeHost, plan: bool, model: str | None) -> None:
        self.host = host
        self.gate_plan = plan
        """The gate refuses tools (plan mode asked for or in force, and not yet left)."""
        self.model_target = model
        self.requested_source: ModeSource | None = None
        self.why_model: str | None = None
        self.scope = PlanScope(host, self)
        """A mode approved for one plan only: its work, and the return when it ends."""

    @property
    def plan_in_force(self) -> bool:
        if self.gate_plan:
            return True
        st = self.host.state
        # Once the user approved (or toggled off), the gate follows at once, even before the
        # CLI's status message confirms; tools then go to the user, never straight through.
        return st.mode == "plan" and st.requested_mode in (None, "plan")

    # -- requests --------------------------------------------------------------------------
    async def set_mode(self, mode: str, source: str = "user") -> None:
        """Request a permission mode; the marker shows it pending until the CLI confirms."""
        h = self.host
        h.check_alive()
        if mode not in ALL_MODES:
            raise OptionError(f"unknown mode {mode!r}: choose one of {', '.join(ALL_MODES)}")
        check_allowed(mode, h.options.forbidden_modes)
        known = next((k for k in _SOURCES if k == source), None)
        if known is None:
            raise OptionError(f"unknown source {source!r}: one of {_SOURCES}")
        self.gate_plan = mode == "plan"
        resting = h.options.mode
        if mode != "plan" and resting != mode and known == "user":
            h.update_options(mode=mode)
        if h.state.mode == mode and h.state.requested_mode is None:
            return
        self.requested_source = known
        h.emit(ev.PlanMode(mode=mode, state="requested", source=known))
        if not h.connected:
            return  # applied once connected
        await self.apply(mode, known)
        if h.state.refused and h.options.mode == mode != resting:
            h.update_options(mode=resting)  # the CLI said no: keep the old resting mode

    async def apply(self, mode: str, source: ModeSource) -> None:
        """Send a mode request to the CLI (and switch between plan and resting model)."""
        h = self.host
        assert h.client is not None
        try:
            await h.control(h.client.set_permission_mode(mode), f"set mode {mode}")
        except SessionError as e:
            self.gate_plan = h.state.mode == "plan"
            h.emit(ev.PlanMode(mode=mode, state="refused", source=source, detail=str(e)))
            return
        o = h.options
        if mode == "plan" and o.plan_model:
            await self.set_model(o.plan_model, why="plan model")
        elif mode != "plan" and o.plan_model and self.model_target != o.model:
            await self.set_model(o.model, why="resting model")

    async def set_model(self, model: str | None, why: str = "requested") -> None:
        """Switch the model for the next request (the marker follows what the CLI reports)."""
        h = self.host
        h.check_alive()
        self.model_target = model
        self.why_model = why
        if h.connected and h.client is not None:
            await h.control(h.client.set_model(model), f"set_model({model!r})")

    async def leaving_plan(self, mode: str) -> None:
        """Approval: the gate stops refusing and the resting model comes back, before the CLI
        sends the next request."""
        h = self.host
        self.gate_plan = False
        self.requested_source = "approval"
        h.emit(ev.PlanMode(mode=mode, state="requested", source="approval"))
        o = h.options
        if o.plan_model and self.model_target != o.model:
            try:
                await self.set_model(o.model, why="resting model")
            except SessionError as e:  # the approval stands; say the model stayed
                h.emit(ev.ErrorEvent(kind="model", message=str(e)))
                h.marker(f"Could not switch back to the resting model: {e}")

    def restored(self, mode: str) -> str | None:
        """A resumed session was in ``mode``: the gate follows it at once (plan mode refuses
        tools before the CLI is up). Returns the mode the CLI restarts in (see
        :meth:`restart_mode`)."""
        self.gate_plan = mode == "plan"
        return self.restart_mode(mode)

    def restart_mode(self, mode: str) -> str | None:
        """The mode a new CLI process of the session starts in to go on in ``mode``: ``mode``
        itself, or None (the resting mode) when the resting mode is bypassPermissions, which
        the CLI allows only if it starts in it: ``mode`` is then requested once it is up."""
        resting = self.host.options.mode
        if resting == "bypassPermissions" and mode != resting:
            self.requested_source = "resume"
            self.host.emit(ev.PlanMode(mode=mode, state="requested", source="resume"))
            return None
        return mode

    # -- reports ---------------------------------------------------------------------------
    def saw_mode(self, mode: str) -> None:
        """The CLI confirmed ``mode``."""
        h = self.host
        prev, requested = h.state.mode, h.state.requested_mode
        if mode == prev and requested is None:
            return
        source: ModeSource
        if requested == mode:
            source = self.requested_source or "user"
        elif mode == "plan" or prev == "plan":
            source = "model"
        else:
            source = "user"
        if requested and requested != mode and prev == "plan" and mode != "plan":
            # approval asked for ``requested``; the CLI went elsewhere (measured: setMode
            # bypassPermissions in a CLI that did not start in it lands in default, silently)
            h.emit(ev.PlanMode(mode=requested, state="refused", source="approval",
                               detail=wording.mode_refused(requested, mode)))
            h.marker(f"Mode not switched: {wording.mode_refused(requested, mode)}")
        h.emit(ev.PlanMode(mode=mode, state="effective", source=source))
        self.gate_plan = mode == "plan"
        if prev != mode:
            h.marker(wording.mode_marker(prev, mode, source == "model"))
        if source == "model" and mode == "plan" and h.options.plan_model:
            spawn(self.set_model(h.options.plan_model, why="plan model"))

    def saw_model(self, model: str) -> None:
        """The CLI reported ``model`` (at a turn's start or on a message)."""
        h = self.host
        prev = h.state.model
        if model == prev:
            return
        why = self.why_model or ("start" if prev is None else "reported by CLI")
        self.why_model = None
        h.emit(ev.ModelSwitched(from_model=prev, to_model=model, why=why))
        if prev is not None:
            h.marker(wording.model_marker(prev, model, why))
