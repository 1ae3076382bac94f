"""The anchor: a plain script driving ``ClaudeSDKClient``, approving in code.

``python -m benchmarks._bare serve`` reads one JSON command a line on stdin and answers one
JSON line on stdout, so the benchmark can interleave bare runs with kernel runs in one process
that stays warm (the SDK imported once, as in a kernel that already ran a session).
``python -m benchmarks._bare first SCRIPT CWD`` is one cold run: import the SDK, start the
scripted model, connect, query, and print the time to the first streamed text.
"""

from __future__ import annotations

import time

T0 = time.monotonic()  # before anything else is imported: the cold run starts here

import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402


def _env(model: Any) -> dict[str, str]:
    return dict(model.env())


async def first_text(script: str, cwd: str) -> dict[str, float]:
    """Cold: import, start the scripted model, connect, query; time to the first text delta."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, StreamEvent

    from plan_widgets.scripted import ScriptedModel

    t_import = time.monotonic()
    model = await ScriptedModel.astart(script, cwd=cwd)
    client = ClaudeSDKClient(ClaudeAgentOptions(cwd=cwd, include_partial_messages=True,
                                                env=_env(model)))
    await client.connect()
    t_connect = time.monotonic()
    await client.query("Hello")
    t_first = None
    async for msg in client.receive_response():
        if t_first is None and isinstance(msg, StreamEvent):
            d = msg.event.get("delta") or {}
            if d.get("type") == "text_delta" and d.get("text"):
                t_first = time.monotonic()
    await client.disconnect()
    await model.astop()
    assert t_first is not None, "no streamed text"
    return {"import": t_import - T0, "connected": t_connect - T0, "first_text": t_first - T0}


async def plan_flow(script: str, cwd: str, prompt: str = "Add a greeting script") -> dict[str, Any]:
    """Plan -> approve (in code, into acceptEdits) -> write -> done, on a new client."""
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        PermissionResultAllow,
        PermissionUpdate,
        ResultMessage,
    )

    from plan_widgets.scripted import ScriptedModel

    got: dict[str, Any] = {"asked": []}

    async def can_use_tool(name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        got["asked"].append(name)
        if name == "ExitPlanMode":
            got["callback"] = time.monotonic()
            return PermissionResultAllow(updated_permissions=[
                PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")])
        return PermissionResultAllow()

    t0 = time.monotonic()
    model = await ScriptedModel.astart(script, cwd=cwd)
    t_model = time.monotonic()
    client = ClaudeSDKClient(ClaudeAgentOptions(
        cwd=cwd, permission_mode="default", can_use_tool=can_use_tool,
        include_partial_messages=True, env=_env(model)))
    await client.connect()
    t_connect = time.monotonic()
    await client.set_permission_mode("plan")
    t_mode = time.monotonic()
    await client.query(prompt)
    async for msg in client.receive_response():
        if isinstance(msg, ResultMessage):
            got["end"] = time.monotonic()
            got["is_error"] = msg.is_error
    await client.disconnect()
    await model.astop()
    wrote = os.path.exists(os.path.join(cwd, "hello.py"))
    return {"to_callback": got["callback"] - t0, "click_to_end": got["end"] - got["callback"],
            "phases": {"model_started": t_model - t0, "connected": t_connect - t0,
                       "plan_mode": t_mode - t0},
            "wrote": wrote, "asked": got["asked"], "is_error": got.get("is_error")}


class Streamer:
    """One connected client reused across turns (like a kernel session)."""

    def __init__(self) -> None:
        self.client: Any = None
        self.model: Any = None

    async def turn(self, script: str, cwd: str, prompt: str,
                   mode: Any = None) -> dict[str, Any]:
        from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, StreamEvent

        from plan_widgets.scripted import ScriptedModel

        if self.client is None:
            self.model = await ScriptedModel.astart(script, cwd=cwd)
            self.client = ClaudeSDKClient(ClaudeAgentOptions(
                cwd=cwd, include_partial_messages=True, env=_env(self.model),
                permission_mode=mode))
            await self.client.connect()
        text: list[str] = []
        deltas = 0
        c0 = time.process_time()
        t0 = time.monotonic()
        await self.client.query(prompt)
        async for msg in self.client.receive_response():
            if isinstance(msg, StreamEvent):
                d = msg.event.get("delta") or {}
                if d.get("type") == "text_delta":
                    text.append(d.get("text", ""))  # what a minimal consumer does with it
                    deltas += 1
            elif isinstance(msg, ResultMessage):
                pass
        return {"cpu": time.process_time() - c0, "wall": time.monotonic() - t0,
                "deltas": deltas, "chars": len("".join(text)), "text": "".join(text)[-200:]}

    async def close(self) -> None:
        if self.client is not None:
            await self.client.disconnect()
            await self.model.astop()
            self.client = None


async def serve() -> None:
    loop = asyncio.get_running_loop()
    streamer = Streamer()
    import claude_agent_sdk  # noqa: F401  (warm, as a kernel after its first session)

    print(json.dumps({"ready": True}), flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        cmd = json.loads(line)
        try:
            if cmd["cmd"] == "flow":
                out: Any = await plan_flow(cmd["script"], cmd["cwd"])
            elif cmd["cmd"] == "stream":
                out = await streamer.turn(cmd["script"], cmd["cwd"], cmd["prompt"],
                                          cmd.get("mode"))
            elif cmd["cmd"] == "close":
                await streamer.close()
                out = {}
            else:
                out = {"error": f"unknown command {cmd['cmd']}"}
        except Exception as e:
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)
    await streamer.close()


def main() -> None:
    if sys.argv[1] == "serve":
        asyncio.run(serve())
    elif sys.argv[1] == "first":
        print(json.dumps(asyncio.run(first_text(sys.argv[2], sys.argv[3]))), flush=True)
    else:
        raise SystemExit("usage: python -m benchmarks._bare serve | first SCRIPT CWD")


if __name__ == "__main__":
    main()
