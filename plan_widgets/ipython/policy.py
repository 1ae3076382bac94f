"""The administrator's policy (``ClaudePolicy``) and settings read from config files, checked.

A team's admin puts the policy in a system-wide IPython config file that every kernel reads,
e.g. ``/etc/ipython/ipython_kernel_config.py`` (or ``<sys.prefix>/etc/ipython/``)::

    c.ClaudePolicy.forbidden_modes = ["bypassPermissions"]
    c.ClaudePolicy.max_budget_usd = 5.0          # per session (the SDK's max_budget_usd)
    c.ClaudePolicy.denied_tools = ["WebFetch"]   # never run, in any mode
    c.ClaudeMagics.idle_timeout = 1800
    c.ClaudeMagics.max_live_sessions = 3

Every new session takes the policy; a cell cannot override it (a forbidden ``--mode`` is one
line saying the administrator forbade it), and ``%claude policy`` shows it. The kernel runs as
the user, so a user who edits their own config can change it: the policy keeps honest people
from mistakes; spending limits that must hold go on the API key (docs/deploy.md).

A setting of the wrong type or an unknown mode name must not cost the user the extension:
:func:`checked` builds the configurable from the valid settings only, says which setting is
wrong in one line each, and the default stands for it.
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar

from traitlets import Float, List, TraitError, Unicode
from traitlets.config import Config, Configurable, LazyConfigValue

from ..model.options import ALL_MODES

C = TypeVar("C", bound=Configurable)


class ClaudePolicy(Configurable):
    """What every session of this kernel is held to (set by the administrator)."""

    forbidden_modes = List(Unicode(), help="Permission modes no session may use, e.g. "
                           "['bypassPermissions'].").tag(config=True)
    max_budget_usd = Float(None, allow_none=True, help="The most a session may spend (USD); "
                           "the CLI ends its turns once reached. Unset: no cap.").tag(config=True)
    denied_tools = List(Unicode(), help="Tools no session may run, in any mode (Claude Code "
                        "tool names or rules, e.g. 'WebFetch', 'Bash(curl:*)').").tag(config=True)

    def session_options(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` held to the policy: forbidden modes and denied tools added to those
        asked for, the smaller spending cap."""
        budgets = [b for b in (given.get("max_budget_usd"), self.max_budget_usd)
                   if b is not None]
        return {**given,
                "forbidden_modes": _union(given.get("forbidden_modes"), self.forbidden_modes),
                "max_budget_usd": min(budgets) if budgets else None,
                "denied_tools": _union(given.get("denied_tools"), self.denied_tools)}

    def lines(self) -> list[str]:
        """The policy as ``%claude policy`` shows it."""
        budget = self.max_budget_usd
        return [
            "forbidden modes: " + (", ".join(self.forbidden_modes) or "none"),
            "spending cap per session: " + (f"${budget:g}" if budget is not None else "none"),
            "tools always denied: " + (", ".join(self.denied_tools) or "none"),
        ]


def _union(a: Any, b: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*(a or ()), *(b or ())]))


_policy: ClaudePolicy | None = None


def current() -> ClaudePolicy:
    """The kernel's policy (read once from the IPython config; empty outside IPython)."""
    global _policy
    if _policy is None:
        from IPython import get_ipython

        ip = get_ipython()
        _policy, problems = checked(ClaudePolicy, ip.config if ip is not None else Config())
        say(problems)
    return _policy


def load(ip: Any) -> ClaudePolicy:
    """Read the policy at ``%load_ext`` (again: a reload reads the files' current values)."""
    global _policy
    _policy, problems = checked(ClaudePolicy, ip.config)
    say(problems)
    return _policy


def checked(cls: type[C], config: Config, **kwargs: Any) -> tuple[C, list[str]]:
    """``cls`` configured from ``config``'s section for it, one setting at a time: a wrong
    one is left at its default, and described in the returned lines."""
    name = cls.__name__
    section = config[name] if name in config else {}
    obj = cls(config=Config(), **kwargs)
    problems: list[str] = []
    for key, value in dict(section).items():
        if not obj.has_trait(key) or not obj.trait_metadata(key, "config"):
            problems.append(f"{name}.{key}: no such setting (ignored)")
            continue
        default = getattr(obj, key)
        if isinstance(value, LazyConfigValue):
            value = value.get_value(default)
        try:
            setattr(obj, key, value)
        except TraitError:
            trait = obj.traits()[key]
            problems.append(f"{name}.{key} = {value!r} is not valid (expected {trait.info()}); "
                            f"using the default {default!r}")
    if isinstance(obj, ClaudePolicy):
        problems += _known_modes(obj)
    return obj, problems


def _known_modes(policy: ClaudePolicy) -> list[str]:
    unknown = [m for m in policy.forbidden_modes if m not in ALL_MODES]
    if not unknown:
        return []
    policy.forbidden_modes = [m for m in policy.forbidden_modes if m in ALL_MODES]
    return [f"ClaudePolicy.forbidden_modes: unknown mode {m!r} ignored (modes: "
            f"{', '.join(ALL_MODES)})" for m in unknown]


def check_magics(magics: Any, policy: ClaudePolicy) -> list[str]:
    """A resting mode from the config that the policy forbids falls back to the default."""
    if magics.mode in policy.forbidden_modes:
        bad, magics.mode = magics.mode, "default"
        return [f"ClaudeMagics.mode = {bad!r} is forbidden by the administrator's policy; "
                "using the default 'default'"]
    return []


def magics() -> Any:
    """The kernel's ``ClaudeMagics`` (None before ``%load_ext plan_widgets``)."""
    from IPython import get_ipython

    ip = get_ipython()
    return ip.magics_manager.registry.get("ClaudeMagics") if ip is not None else None


def say(problems: list[str]) -> None:
    for line in problems:
        print(f"plan_widgets: {line}", file=sys.stderr)


def show(_args: Any) -> None:
    """``%claude policy``: the administrator's policy and this kernel's limits."""
    for line in current().lines():
        print(line)
    m = magics()
    if m is not None:
        idle = f"{m.idle_timeout:g} s" if m.idle_timeout else "never"
        cap = str(m.max_live_sessions) if m.max_live_sessions else "none"
        print(f"idle CLIs close after: {idle}; live CLIs per kernel: {cap}")
