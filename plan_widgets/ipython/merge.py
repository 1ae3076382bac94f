"""Where a session's options come from, and how they merge: the one place to read.

A new session's options are, lowest first:

1. the product's defaults (:class:`~plan_widgets.model.options.SessionOptions`);
2. ``%config ClaudeMagics.<setting>`` (:data:`CONFIGURED`) and ``ClaudeMagics.agent_options``
   (the SDK's options by its names, a dict): :func:`configured`;
3. what the session's predecessor was started with, when a cell replaces it (``obtain.py``);
4. the cell's flags (:func:`from_cell`), or the keyword arguments of
   ``plan_widgets.session(...)`` (:func:`from_python`: the product's names, the SDK's names,
   or ``options=ClaudeAgentOptions(...)``);

merged by :func:`merged` (a later layer wins; agent options merge name by name), then
:func:`checked`: the administrator's policy goes on top (``policy.py``: forbidden modes,
denied tools, the smaller budget), the values are validated (``SessionOptions.validated``:
one line for a mistake, options the product owns set aside with one line each), and
credentials are required. The registry (``registry.py``) then only starts the session and
keeps it in the kernel's table. Which options change a live session and which need a new one:
``obtain.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any

from ..agent.credentials import require_credentials
from ..model import agent_options
from ..model.errors import OptionError
from ..model.options import SessionOptions

CONFIGURED = ("model", "plan_model", "mode", "approval_timeout", "log_dir", "scripted",
              "cli_path", "kernel_tools", "idle_timeout")
"""``ClaudeMagics`` settings that are a new session's defaults (and ``agent_options``)."""
SESSION_FIELDS = tuple(f.name for f in dataclasses.fields(SessionOptions)
                       if f.name not in ("name", "set_aside"))
CELL_FLAGS = {"effort": "effort", "add_dir": "add_dirs", "allowed_tools": "allowed_tools",
              "append_system_prompt": "append_system_prompt"}
"""``%%claude`` flags that are agent options (argparse dest → the SDK's name)."""


def configured(config: Any) -> dict[str, Any]:
    """The ``%config ClaudeMagics`` layer (None: a setting left unset; outside IPython all)."""
    out: dict[str, Any] = {k: getattr(config, k, None) if config is not None else None
                           for k in CONFIGURED}
    raw = getattr(config, "agent_options", None) if config is not None else None
    if raw:
        own, agent, notes = agent_options.split(raw, SESSION_FIELDS)
        for k, v in own.items():  # the SDK's name of a setting: as if set under ours
            out[k] = v if out.get(k) is None else out[k]
        out["agent"] = agent
        out["set_aside"] = tuple(notes)
    return out


def from_cell(args: argparse.Namespace) -> dict[str, Any]:
    """The options a ``%%claude`` line gives (None: not given)."""
    agent: dict[str, Any] = {sdk: getattr(args, flag, None) for flag, sdk in CELL_FLAGS.items()}
    tools = agent.get("allowed_tools")
    if tools:
        agent["allowed_tools"] = [t for part in tools for t in part.replace(",", " ").split()]
    return {
        "model": args.model, "plan_model": args.plan_model, "mode": args.mode, "cwd": args.cwd,
        "scripted": args.scripted, "approval_timeout": args.approval_timeout,
        "resume": args.resume,
        "kernel_tools": False if getattr(args, "no_kernel_tools", False) else None,
        "agent": {k: v for k, v in agent.items() if v} or None,
    }


def from_python(options: Mapping[str, Any]) -> dict[str, Any]:
    """``plan_widgets.session(**options)``'s options: the product's names and the SDK's
    (``options=`` a ``ClaudeAgentOptions``: its fields that differ from the defaults)."""
    given = {k: v for k, v in options.items() if v is not None and k != "options"}
    if options.get("options") is not None:
        given = {**agent_options.from_object(options["options"]), **given}
    own, agent, notes = agent_options.split(given, SESSION_FIELDS)
    if "agent" in own:  # the product's own field, given directly
        agent = {**dict(own.pop("agent") or {}), **agent}
    if agent:
        own["agent"] = agent
    if notes:
        own["set_aside"] = tuple(notes)
    return own


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """The layers, lowest first, over each other: a later layer's value wins (None: not
    given); agent options and set-aside lines add up name by name."""
    out: dict[str, Any] = {}
    for layer in layers:
        for k, v in layer.items():
            if v is None:
                continue
            if k == "agent":
                out[k] = {**out.get(k, {}), **v}
            elif k == "set_aside":
                out[k] = tuple(dict.fromkeys([*out.get(k, ()), *v]))
            else:
                out[k] = v
    return out


def checked(name: str, given: Mapping[str, Any]) -> SessionOptions:
    """A new session's options, the policy on top, checked: bad input and missing
    credentials are one line."""
    from .policy import current

    unknown = [k for k in given if k not in (*SESSION_FIELDS, "set_aside")]
    if unknown:
        raise OptionError(agent_options.nearest(unknown[0], SESSION_FIELDS))
    opts = SessionOptions(name=name, **current().session_options(dict(given))).validated()
    require_credentials(opts.scripted, opts.env)
    return opts
