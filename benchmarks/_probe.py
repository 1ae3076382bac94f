"""Light instrumentation installed INSIDE a benchmark kernel (never by the product itself).

``install()`` wraps two SDK internals at class level, in this kernel only:

- ``Query._spawn_control_request_handler``: the moment a control request from the CLI (here:
  ``can_use_tool``) has been read, before any callback runs;
- ``SubprocessCLITransport.write``: the moment a permission answer (a ``control_response``
  with a ``behavior``) has been written to the CLI's stdin;
- ``SubprocessCLITransport.read_messages``: the moment a turn's ``result`` message has been
  read from the CLI (before the SDK or the session does anything with it).

Times are ``time.monotonic()``, one clock for every process on the machine (CLOCK_MONOTONIC),
so they compare with the benchmark driver's own timestamps.
"""

from __future__ import annotations

import json
import time
from typing import Any

arrivals: list[tuple[float, str]] = []
"""(time, tool name) for each can_use_tool request read from the CLI."""
responses: list[tuple[float, str]] = []
"""(time, behavior) for each permission answer written to the CLI."""
results: list[float] = []
"""When each ``result`` message was read from the CLI."""
_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    from claude_agent_sdk._internal.query import Query
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    spawn = Query._spawn_control_request_handler
    write = SubprocessCLITransport.write
    read = SubprocessCLITransport.read_messages

    async def read_probe(self: Any) -> Any:
        async for message in read(self):
            if message.get("type") == "result":
                results.append(time.monotonic())
            yield message

    def spawn_probe(self: Any, request: Any) -> None:
        req = request.get("request") or {}
        if req.get("subtype") == "can_use_tool":
            arrivals.append((time.monotonic(), str(req.get("tool_name"))))
        spawn(self, request)

    async def write_probe(self: Any, data: str) -> None:
        await write(self, data)
        if '"control_response"' in data and '"behavior"' in data:
            try:
                behavior = json.loads(data)["response"]["response"]["behavior"]
            except Exception:
                behavior = "?"
            responses.append((time.monotonic(), str(behavior)))

    Query._spawn_control_request_handler = spawn_probe  # type: ignore[method-assign]
    SubprocessCLITransport.write = write_probe  # type: ignore[method-assign]
    SubprocessCLITransport.read_messages = read_probe  # type: ignore[method-assign]
    _installed = True


def take() -> str:
    """The recorded times as JSON, and clear them."""
    out = json.dumps({"arrivals": arrivals, "responses": responses, "results": results})
    arrivals.clear()
    responses.clear()
    results.clear()
    return out
