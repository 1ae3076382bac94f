"""The CLI's ``system`` messages (and its other side messages) as signals, and the table of
what is known: every subtype is either translated here or listed as deliberately ignored,
with the reason (the same table is in docs/cli.md#bad-day). Anything else is an
:class:`~signals.Unknown`: logged and shown as a quiet line, never swallowed.

Pure functions of a message's ``subtype`` and ``data`` (no SDK import: :mod:`sdk` calls them).
"""

from __future__ import annotations

from typing import Any

from . import signals as sig

TRANSLATED: dict[str, str] = {
    "init": "the model, the permission mode, the MCP servers and their status",
    "status": "the permission mode; compaction running and its result",
    "api_retry": "the retry line (reason, attempt, countdown)",
    "model_fallback": "a model fallback line; the model marker follows",
    "model_refusal_fallback": "a model fallback line; the model marker follows",
    "model_consent_fallback": "a model fallback line; the model marker follows",
    "compact_boundary": "the compaction line, its event, the context meter",
    "informational": "a quiet line with its text (the CLI's notices to the user)",
    "commands_changed": "the slash commands and skills (`%claude commands`, Tab)",
    "task_started": "a subagent's line (translated by the SDK's own type)",
    "task_progress": "a subagent's progress",
    "task_notification": "a subagent's end",
    "task_updated": "a subagent's end (final status)",
}
"""System subtypes this version translates, and into what."""

IGNORED: dict[str, str] = {
    "hook_started": "hook events come only with include_hook_events, which is off",
    "hook_response": "hook events come only with include_hook_events, which is off",
    "mirror_error": "made by the SDK for a transcript mirror, which is not used",
    "session_state_changed": "the turn's own messages already say running/idle",
    "turn_duration": "the result carries the duration",
    "thinking_tokens": "the result's usage carries the tokens",
    "notification": "the CLI's terminal notifications (bell, desktop), for its own UI",
    "local_command": "a local command's output comes as an assistant message too",
    "stop_hook_summary": "hooks here are the session's own, reported on their tool lines",
    "session_metadata": "metadata for the CLI's own session list",
    "session_title_changed": "the CLI's own session list",
    "post_turn_summary": "the CLI's own session list",
    "background_tasks_changed": "task_started/task_notification carry the same",
    "model_refusal_no_fallback": "the result that follows says the refusal in one line",
    "permission_denied": "the tool line says the refusal (the result carries the reason)",
    "control_request_progress": "the control request's own answer says the outcome",
    "bridge_state": "the state of a remote bridge, not used here",
}
"""System subtypes seen in the CLI's strings that this version leaves out, and why."""

IGNORED_TYPES: dict[str, str] = {
    "command_lifecycle": "a prompt queued, started, done: its echo and its result say it",
    "tool_use_summary": "a summary of tool calls for the CLI's own UI: the tool lines say it",
    "refusal_continuation": "the model_refusal_fallback line and the result say it",
    "keep_alive": "a heartbeat of the stream",
    "auth_status": "a login's progress; a rejected key ends the turn with one line",
    "notification": "the CLI's own terminal notifications",
    "active_goal": "sent only to a remote (cloud) host",
}
"""Message types the SDK does not parse (it skips them) that this version leaves out, and
why. Every other type the SDK skips is an :class:`~signals.Unknown`."""

_REASONS = {"overloaded": "API overloaded", "rate_limit": "rate limited",
            "server_error": "server error", "unknown": "no response",
            "connection_error": "no response", "timeout": "no response"}


def retry_reason(status: int | None, error: str | None) -> str:
    """The cause of a retry in words: overloaded, rate limited, server error, no response."""
    if status == 529 or error == "overloaded":
        return "API overloaded"
    if status == 429 or error == "rate_limit":
        return "rate limited"
    if status is not None and status >= 500:
        return "server error"
    if status is None:
        return "no response"
    return _REASONS.get(error or "", f"API error {status}")


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def system_signals(subtype: str, data: dict[str, Any]) -> list[sig.Signal]:
    """The signals of one ``system`` message (init and status included)."""
    out: list[sig.Signal] = []
    if subtype == "init":
        if data.get("model"):
            out.append(sig.ModelReport(str(data["model"])))
        servers = mcp_servers(data.get("mcp_servers"))
        if servers is not None:
            out.append(servers)
    if subtype in ("init", "status") and data.get("permissionMode"):
        out.append(sig.ModeReport(str(data["permissionMode"]), initial=subtype == "init"))
    if subtype == "status":
        if data.get("status") == "compacting":
            out.append(sig.Compacting(True))
        elif data.get("compact_result"):
            out.append(sig.Compacting(False, str(data["compact_result"]),
                                      data.get("compact_error")))
    elif subtype == "api_retry":
        out.append(sig.ApiRetry(_int(data.get("attempt")) or 1, _int(data.get("max_retries")),
                                _int(data.get("retry_delay_ms")), _int(data.get("error_status")),
                                data.get("error") if isinstance(data.get("error"), str) else None))
    elif subtype in ("model_fallback", "model_refusal_fallback", "model_consent_fallback"):
        out.append(_fallback(subtype, data))
    elif subtype == "compact_boundary":
        meta = data.get("compact_metadata") or data.get("compactMetadata") or {}
        out.append(sig.Compacted(str(meta.get("trigger") or "auto"),
                                 _int(meta.get("pre_tokens")), _int(meta.get("post_tokens")),
                                 data.get("uuid")))
    elif subtype == "informational":
        if isinstance(data.get("content"), str) and data["content"].strip():
            out.append(sig.Notice(" ".join(data["content"].split())[:300]))
    elif subtype not in TRANSLATED and subtype not in IGNORED:
        out.append(sig.Unknown(f"system/{subtype}", _gist(data)))
    return out


def _fallback(subtype: str, data: dict[str, Any]) -> sig.Fallback:
    """A model fallback, read defensively (its shape differs by kind and CLI version)."""
    def first(*keys: str) -> str | None:
        for k in keys:
            v = data.get(k)
            if isinstance(v, str) and v:
                return v
        return None

    return sig.Fallback(
        subtype, to_model=first("fallback_model", "fallbackModel", "to_model", "model"),
        from_model=first("original_model", "originalModel", "from_model"),
        reason=first("content") or first("trigger", "reason"))


def mcp_servers(raw: Any) -> sig.McpServers | None:
    """The MCP servers of an ``init`` message or of ``get_mcp_status()``."""
    if isinstance(raw, dict):
        raw = raw.get("mcpServers", raw.get("mcp_servers"))
    if not isinstance(raw, list):
        return None
    servers = []
    for s in raw:
        if isinstance(s, dict) and s.get("name"):
            err = s.get("error")
            servers.append((str(s["name"]), str(s.get("status") or "unknown"),
                            str(err) if err else None))
    return sig.McpServers(tuple(servers))


def rate_limit(info: Any) -> sig.RateLimit:
    """A ``rate_limit_event``'s info (the SDK's ``RateLimitInfo``)."""
    resets = getattr(info, "resets_at", None)
    return sig.RateLimit(str(getattr(info, "status", "") or "unknown"),
                         float(resets) if isinstance(resets, int | float) else None,
                         getattr(info, "rate_limit_type", None))


# -- subagents (the SDK types them; read here by attribute) ----------------------------------


def task_started(msg: Any) -> list[sig.Signal]:
    d = msg.data or {}
    return [sig.AgentStart(msg.task_id, msg.tool_use_id, msg.description or "",
                       subagent_type=d.get("subagent_type"),
                       background=bool(d.get("is_backgrounded")), prompt=d.get("prompt"))]


def _usage(u: Any) -> dict[str, Any]:
    u = u if isinstance(u, dict) else {}
    return {"tokens": int(u.get("total_tokens") or 0), "tool_uses": int(u.get("tool_uses") or 0),
            "duration_ms": u.get("duration_ms")}


def task_progress(msg: Any) -> list[sig.Signal]:
    return [sig.AgentStep(msg.task_id, activity=msg.description or None,
                      last_tool=msg.last_tool_name, **_usage(msg.usage))]


def task_notification(msg: Any) -> list[sig.Signal]:
    usage = _usage(msg.usage) if msg.usage else {}
    return [sig.AgentEnd(msg.task_id, str(msg.status), summary=msg.summary or None, **usage)]


def task_updated(msg: Any) -> list[sig.Signal]:
    status = (getattr(msg, "patch", None) or {}).get("status")
    if status in ("completed", "failed", "stopped", "killed"):
        return [sig.AgentEnd(msg.task_id, str(status))]
    return []


def _gist(data: Any) -> str:
    """A short, plain description of an unknown message's content."""
    if not isinstance(data, dict):
        return ""
    for key in ("content", "message", "text", "summary"):
        if isinstance(data.get(key), str) and data[key].strip():
            return " ".join(str(data[key]).split())[:160]
    keys = [k for k in data if k not in ("type", "subtype", "uuid", "session_id", "written_at")]
    return ("fields: " + ", ".join(sorted(keys)[:8])) if keys else ""


def unknown_type(raw: Any) -> list[sig.Signal]:
    """A message of a type the SDK skipped (or could not parse): an Unknown, unless the
    table says why it is left out."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind in IGNORED_TYPES:
        return []
    sub = raw.get("subtype") if isinstance(raw, dict) else None
    name = str(kind or type(raw).__name__) + (f"/{sub}" if sub else "")
    return [sig.Unknown(name, _gist(raw))]
