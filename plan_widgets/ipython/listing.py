"""``%claude commands`` and ``%claude tools``: what the session's agent can use.

Both answer from what is known (nothing is asked of the CLI, no CLI is started): the commands
and skills from the CLI's own report (``agent/commands.py``), the notebook's functions from
``@plan_widgets.tool`` (``kernel/user_tools.py``).
"""

from __future__ import annotations

import argparse

from ..agent.commands import offered


def commands(args: argparse.Namespace) -> None:
    """The session's slash commands and skills: name, argument hint, where each comes from,
    and its description."""
    found = offered(args.live)
    if not found:
        print(f"{args.live.name}: no commands known yet (they are listed once its CLI has "
              "started: run a %%claude cell)")
        return
    width = min(32, max(len(c.name) + min(len(c.argument_hint), 30) + 2 for c in found))
    for kind, group in (("commands", [c for c in found if not c.skill]),
                        ("skills", [c for c in found if c.skill])):
        if not group:
            continue
        print(f"{kind} ({len(group)}):")
        for c in group:
            hint = c.argument_hint if len(c.argument_hint) <= 30 else c.argument_hint[:29] + "…"
            head = f"/{c.name}" + (f" {hint}" if hint else "")
            desc = " ".join(c.description.split())
            print(f"  {head:<{width}} [{c.source}] {desc[:100]}".rstrip())


def tools(args: argparse.Namespace) -> None:
    """The notebook's functions the agent can call (``@plan_widgets.tool``), and whether the
    session's CLI has them yet."""
    from . import registry
    from .kernel.user_tools import listed

    found = listed()
    if not found:
        print("no notebook functions are tools yet: decorate one with @plan_widgets.tool "
              "(reads only) or @plan_widgets.tool(changes=True) (asks on a card)")
        return
    s = registry.get(args.name or "default")
    host = getattr(s, "host_tools", None)
    for t in found:
        params = ", ".join(t.schema.get("properties", {}))
        kind = "changes: asks first, not in plan mode" if t.changes else "reads only"
        served = ""
        if s is not None and host is None:
            served = f"; session {s.name!r} runs without the kernel tools"
        elif s is not None and host is not None and host.tool(host.qualified(t.name)) is None:
            served = (f"; not yet served to session {s.name!r} (defined after its CLI "
                      "started: served from its next start)")
        print(f"{host.qualified(t.name) if host else t.name}({params}) [{kind}{served}] "
              f"{t.description[:100]}")
