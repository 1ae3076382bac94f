"""Whether anyone can click, and the settings of an unattended run (docs/unattended.md).

Measured (docs/unattended.md, "Is anyone there?"): a page's widget manager answers a question
the kernel asks when the extension loads, and an executor (papermill 2.7, nbconvert 7.17,
nbclient 0.11, nbval, a jupyter_client script) does not; the probe is ``presence.py``. With
no answer within ``presence.PROBE_TIMEOUT`` no one can click.
Terminal IPython: someone can answer when stdin is a terminal. A setting overrides either way:
``%config ClaudeMagics.unattended``, the papermill parameter ``plan_widgets_unattended``, or
``PLAN_WIDGETS_UNATTENDED`` (``auto``, ``yes``, ``no``); rules likewise (``rules``,
``plan_widgets_rules``, ``PLAN_WIDGETS_RULES``): the first one set wins.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from .output import in_kernel
from .presence import Presence

if TYPE_CHECKING:
    from ..agent.rules import Rules

_YES = ("1", "yes", "true", "on")
_NO = ("0", "no", "false", "off")


class UnattendedError(RuntimeError):
    """A decision no one could make in an unattended run (or a malformed rule): the cell
    fails, so the executor exits non-zero. Shown as its message alone, no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"UnattendedError: {self}"]


_presence: Presence | None = None


def _loop() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def start_probe() -> None:
    """``%load_ext``: open the probe now, so its answer has come by the first decision."""
    global _presence
    if not (in_kernel() and _loop()):
        return
    try:
        if forced() is not None:  # a setting decides: nothing to ask (someone_can_click
            return  # starts the probe if the setting goes back to auto)
    except UnattendedError:
        pass  # a malformed setting: check_settings says so; the probe runs meanwhile
    if _presence is None:
        _presence = Presence()
    _presence.start()


def setting(name: str) -> tuple[str, str] | None:
    """``(value, where)`` of an unattended setting: ``%config``, papermill, environment."""
    from IPython import get_ipython

    ip = get_ipython()
    magics = ip.magics_manager.registry.get("ClaudeMagics") if ip is not None else None
    value = getattr(magics, name, "") if magics is not None else ""
    if value:
        return str(value), f"%config ClaudeMagics.{name}"
    param = (ip.user_ns.get(f"plan_widgets_{name}") if ip is not None else None)
    if param not in (None, ""):
        return str(param), f"the papermill parameter plan_widgets_{name}"
    env = os.environ.get(f"PLAN_WIDGETS_{name.upper()}", "")
    return (env, f"PLAN_WIDGETS_{name.upper()}") if env else None


def forced() -> bool | None:
    """The override: True someone can click, False no one, None detect."""
    got = setting("unattended")
    if got is None or got[0].strip().lower() in ("", "auto"):
        return None
    value, where = got[0].strip().lower(), got[1]
    if value in _YES:
        return False
    if value in _NO:
        return True
    raise UnattendedError(f"{where} = {got[0]!r}: write auto, yes or no")


def someone_at_terminal() -> bool:
    """Terminal IPython: whether a person can answer the prompt (stdin is a terminal, or
    the setting says so)."""
    override = forced()
    if override is not None:
        return override
    return bool(getattr(sys.stdin, "isatty", lambda: False)())


async def someone_can_click() -> bool:
    """Whether a person can answer a card or a prompt in this run."""
    if not in_kernel():
        return someone_at_terminal()
    override = forced()
    if override is not None:
        return override
    start_probe()
    return _presence is not None and await _presence.frontend()


def rules() -> Rules:
    """The rules in force (none set: no rules); a malformed one raises :class:`RuleError`."""
    from ..agent.rules import Rules

    got = setting("rules")
    return Rules.parse(got[0], got[1]) if got is not None else Rules()


def check_settings() -> None:
    """At load and before each cell: a malformed setting fails the cell, in one line."""
    forced()
    if setting("rules") is None:
        return  # (%load_ext stays cheap: the rules' parser loads with the first rule)
    from ..agent.rules import RuleError

    try:
        rules()
    except RuleError as e:
        raise UnattendedError(str(e)) from None


_decider: Any = None
"""The decider registered for every session (``decide_with(fn)`` with no session)."""
_decider_unattended = False


def attach(session: Any) -> None:
    """Give ``session``'s referee this kernel's presence, rules and default decider."""
    referee = session.gate.host.referee
    referee.presence = someone_can_click
    referee.rules = rules
    if _decider is not None and referee.decider is None:
        referee.decider = _decider
        referee.decider_unattended = _decider_unattended


def raise_failures(session: Any) -> None:
    """Raise the decisions no rule could make (one error naming each), if any."""
    failures = session.gate.host.referee.take_failures()
    if failures:
        raise UnattendedError("\n".join(failures))


def decide_with(fn: Any, session: Any = None, *, unattended: bool = False) -> None:
    """Register ``fn(decision)`` as a decider: called first for every decision, attended or
    not, it decides by calling the decision's methods (``approve``, ``answer``, ``allow``...)
    or leaves it open. ``session``: that session only; default: every session of this kernel
    (also those started later). ``None`` removes it. ``unattended=True``: only in a run where
    no one can click (papermill, nbconvert, nbval); with a person there, each card waits for
    their click (how the example notebooks run both ways)."""
    global _decider, _decider_unattended
    targets: list[Any] = [session] if session is not None else []
    if session is None:
        _decider, _decider_unattended = fn, unattended
        from .registry import sessions

        targets = list(sessions().values())
    for s in targets:
        s.gate.host.referee.decider = fn
        s.gate.host.referee.decider_unattended = unattended
