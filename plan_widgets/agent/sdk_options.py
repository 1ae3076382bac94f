"""The parts of the SDK client's options that need no SDK import (``sdk.py`` hands in the
SDK's field names, its version and its ``AgentDefinition``): the user's agent options
merged with the product's, and the ``PreToolUse`` screen hook."""

from __future__ import annotations

from typing import Any

from ..model.errors import SessionError
from .seam import ClientConfig, PermissionRequest

MERGED = ("mcp_servers", "extra_args", "system_prompt", "append_system_prompt")
"""Options merged with the product's own (kernel tools' server, prompt echoes, its words)."""


def passed(user: dict[str, Any], fields: set[str], version: str,
           agent_definition: Any) -> dict[str, Any]:
    """The user's agent options the SDK takes as they are (the merged ones are added by the
    client); one the installed SDK does not know is one line naming its version."""
    out: dict[str, Any] = {}
    for name, value in user.items():
        if name in MERGED:
            continue
        if name not in fields:
            raise SessionError(f"option {name!r} is not known to the installed {version}: "
                               f"upgrade it, or leave {name} out")
        out[name] = agents(value, agent_definition) if name == "agents" else value
    return out


def agents(value: Any, agent_definition: Any) -> Any:
    """Custom subagents given as dicts become the SDK's ``AgentDefinition``."""
    if not isinstance(value, dict):
        return value
    try:
        return {k: agent_definition(**v) if isinstance(v, dict) else v
                for k, v in value.items()}
    except TypeError as e:
        raise SessionError(f"agents: {e} (each agent is a dict of description, prompt, and "
                           "optionally tools and model)") from None


def system_prompt(user: Any, appended: list[str | None]) -> Any:
    """Claude Code's own prompt (or the user's ``system_prompt``) with the kernel's words and
    the user's ``append_system_prompt`` after it."""
    tail = "\n\n".join(a for a in appended if a)
    if isinstance(user, str):
        return user + ("\n\n" + tail if tail else "")
    if isinstance(user, dict) and user.get("type") == "preset":
        tail = "\n\n".join(a for a in (user.get("append"), tail) if a)
        return {**user, **({"append": tail} if tail else {})}
    if user is not None or not tail:
        return user  # (None: as the SDK does by default)
    return {"type": "preset", "preset": "claude_code", "append": tail}


def screen_hook(config: ClientConfig) -> Any:
    """A ``PreToolUse`` hook over ``config.screen``: it runs before the permission check in
    every mode (acceptEdits never asks ``can_use_tool`` about an edit)."""
    screen = config.screen
    assert screen is not None

    async def hook(data: Any, tool_use_id: str | None, _ctx: Any) -> Any:
        request = PermissionRequest(tool=str(data.get("tool_name", "")),
                                    input=dict(data.get("tool_input") or {}),
                                    tool_use_id=tool_use_id)
        deny = await screen(request)
        if deny is None:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": deny.message}}

    return hook
