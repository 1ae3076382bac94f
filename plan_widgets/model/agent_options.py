"""The SDK's agent options a session passes to the CLI, and those the product owns.

A session takes every option of ``claude_agent_sdk.ClaudeAgentOptions`` by its own name
(``effort``, ``add_dirs``, ``allowed_tools``, ``agents``, ``mcp_servers``, ...): from Python,
from ``%config ClaudeMagics.agent_options`` (a dict), and the common ones as ``%%claude``
flags. :func:`split` sorts what a user gave into

- the session's own options (``model``, ``cwd``, ``permission_mode`` as ``mode``, ...: the
  names :class:`~plan_widgets.model.options.SessionOptions` has under another name or the same);
- options passed to the CLI as given (:data:`PASSED`);
- options the product owns (:data:`OWNED`): set aside, with one line saying which and why;
- a name nobody knows: an :class:`OptionError` naming the nearest valid one.

No I/O and no SDK import here (the SDK costs 1.3 s to import): whether the installed SDK knows
an option is checked where the client is made (``agent/sdk.py``). docs/options.md lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import OptionError

PASSED = (
    "add_dirs", "agents", "allowed_tools", "append_system_prompt", "betas", "effort",
    "extra_args", "fallback_model", "include_hook_events", "load_timeout_ms",
    "max_buffer_size", "max_thinking_tokens", "max_turns", "mcp_servers", "output_format",
    "plugins", "sandbox", "setting_sources", "settings", "skills", "strict_mcp_config",
    "system_prompt", "task_budget", "thinking", "tools", "user", "verbatim_prompts",
)
"""Options given to the CLI as the user wrote them (``append_system_prompt`` is ours: the
CLI's ``--append-system-prompt``, added after Claude Code's own prompt and the kernel's).
``mcp_servers``, ``extra_args`` and ``system_prompt`` are merged with what the product adds."""

ALIASES = {
    "permission_mode": "mode", "disallowed_tools": "denied_tools",
    "enable_file_checkpointing": "checkpointing", "model": "model", "cwd": "cwd",
    "resume": "resume", "cli_path": "cli_path", "env": "env",
    "max_budget_usd": "max_budget_usd",
}
"""SDK names that are a session option of the product (under this name)."""

OWNED = {
    "can_use_tool": "the permission callback is the product's gate (cards, plan mode, policy)",
    "permission_prompt_tool_name": "permissions are asked through the product's gate",
    "hooks": "the product's PreToolUse screen owns SDK hooks; put yours in "
             ".claude/settings.json (the CLI runs them)",
    "include_partial_messages": "the turn view streams text from partial messages",
    "forward_subagent_text": "subagents' text is shown under their Agent line",
    "stderr": "the CLI's stderr is kept for the session's error lines",
    "debug_stderr": "the CLI's stderr is kept for the session's error lines",
    "session_id": "the session names its conversation (use resume= to continue one)",
    "continue_conversation": "use resume= (or %claude resume) to continue a conversation",
    "fork_session": "use resume= (or %claude resume) to continue a conversation",
    "resume_session_at": "rewinding is %claude rewind's job",
    "resume_drops_turn": "rewinding is %claude rewind's job",
    "session_store": "the session's event log is the product's store",
    "session_store_flush": "the session's event log is the product's store",
    "client_app": "the product names itself to the CLI",
}
"""Options the product must own; a user's value is set aside (reason given)."""

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The SDK's ``effort`` levels (``--effort``)."""
RESERVED_SERVER = "kernel"
"""The kernel tools' in-process MCP server: a user's server of this name is set aside."""
OWNED_ARGS = ("replay-user-messages",)
"""CLI flags in ``extra_args`` the product relies on (prompt echoes tell turns apart)."""


def known() -> tuple[str, ...]:
    """Every name a session's options accept by the SDK's spelling."""
    return (*PASSED, *ALIASES, *OWNED)


def nearest(name: str, names: tuple[str, ...] | list[str]) -> str:
    """``name`` is not an option: one line naming the nearest valid one."""
    import difflib  # (only on a mistake: %load_ext stays cheap)

    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}?" if close else "docs/options.md lists them"
    return f"unknown option {name!r}: {hint}"


def from_object(options: Any) -> dict[str, Any]:
    """The fields of a ``ClaudeAgentOptions`` that differ from its defaults."""
    import dataclasses

    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        raise OptionError(f"options= takes a ClaudeAgentOptions, not {type(options).__name__}")
    default = type(options)()
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)
            if getattr(options, f.name) != getattr(default, f.name)}


def split(given: Mapping[str, Any], session_fields: tuple[str, ...]
          ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``given`` (SDK names, the product's names) as: the session's own options, the agent
    options passed to the CLI, and one line per option set aside. An unknown name raises."""
    own: dict[str, Any] = {}
    agent: dict[str, Any] = {}
    notes: list[str] = []
    for name, value in given.items():
        if name in session_fields:
            own[name] = value
        elif name in ALIASES:
            own[ALIASES[name]] = value
        elif name in PASSED:
            agent[name] = value
        elif name in OWNED:
            notes.append(set_aside(name, OWNED[name]))
        else:
            raise OptionError(nearest(name, [*session_fields, *known()]))
    return own, agent, notes


def set_aside(name: str, why: str) -> str:
    return f"option {name} set aside: {why}"


def checked(agent: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Agent options with the product's parts taken out of the merged ones (a user's MCP
    server named ``kernel``, an owned CLI flag), and a line for each; values of the wrong
    shape raise one line."""
    out = dict(agent)
    notes: list[str] = []
    servers = out.get("mcp_servers")
    if servers is not None:
        if not isinstance(servers, Mapping):
            raise OptionError("mcp_servers: give a dict of server name to its config (a .mcp.json "
                              "file in the working folder also works)")
        if RESERVED_SERVER in servers:
            notes.append(set_aside(f"mcp_servers[{RESERVED_SERVER!r}]",
                                   "that name is the kernel tools' server; rename yours"))
            out["mcp_servers"] = {k: v for k, v in servers.items() if k != RESERVED_SERVER}
    args = out.get("extra_args")
    if args is not None:
        if not isinstance(args, Mapping):
            raise OptionError("extra_args: give a dict of CLI flag (without --) to its value "
                              "(None for a flag without one)")
        for flag in OWNED_ARGS:
            if flag in args:
                notes.append(set_aside(f"extra_args[{flag!r}]", "the product relies on it"))
        out["extra_args"] = {k: v for k, v in args.items() if k not in OWNED_ARGS}
    for name in ("add_dirs", "allowed_tools", "betas", "setting_sources"):
        if isinstance(out.get(name), str):
            out[name] = [out[name]]  # one folder or tool, as a list
    return out, notes


def shown(agent: Mapping[str, Any]) -> str:
    """Agent options in one line, for ``%claude status`` (long values shortened)."""
    parts = []
    for k, v in sorted(agent.items()):
        text = repr(v)
        parts.append(f"{k}={text if len(text) <= 60 else text[:57] + '...'}")
    return ", ".join(parts) or "none"
