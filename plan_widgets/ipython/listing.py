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
    width = min(32, max(len(c.name) + len(c.argument_hint) + 2 for c in found))
    for kind, group in (("commands", [c for c in found if not c.skill]),
                        ("skills", [c for c in found if c.skill])):
        if not group:
            continue
        print(f"{kind} ({len(group)}):")
        for c in group:
            head = f"/{c.name}" + (f" {c.argument_hint}" if c.argument_hint else "")
            desc = " ".join(c.description.split())
            print(f"  {head:<{width}} [{c.source}] {desc[:100]}".rstrip())
