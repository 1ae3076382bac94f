"""Figure 1 taken apart: what in the session's setup of the CLI costs time before the
``ExitPlanMode`` callback (issue 25, item 8).

``python -m benchmarks._flowparts [REPS [VARIANT,...]]`` runs the bare plan flow (``_bare.py``)
once as it is and once with each thing the session gives the CLI and the bare script does not
(one at a time, then all of them), the variants interleaved, the order rotated every
repetition, one process (the SDK imported once). Per variant it prints the medians of the
time to the callback, to ``connect()``'s return, of ``connect()`` itself (``cli_init``: the CLI's
start, without the scripted model's), and of the part after plan mode is in force,
the time from the approval to the turn's result (``approved_to_end``, issue 46), and the
medians of the differences to the bare run of the same repetition (``*_vs_bare``: steadier
on a busy machine).
``session`` is exactly what a session gives the SDK (``plan_widgets.agent.sdk._options``, the
kernel tools' MCP server included) and its own process group; ``all`` is the parts one by one
together (the reqlog and process group aside).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

PLAN = str(Path(__file__).parent / "scripts" / "plan_approve.yaml")
EDIT_TOOLS = "Edit|MultiEdit|NotebookEdit|Write"


def _prompt() -> str:
    from plan_widgets.agent.seam import HostTools
    from plan_widgets.ipython.kernel.tools import prompt

    return prompt("analysis.ipynb", HostTools(server="kernel", tools=(), notebook=None,
                                               prompt=""))


def _host() -> dict[str, Any]:
    """The kernel tools as a session in a notebook gives them (``lifecycle._host_config``)."""
    from plan_widgets.agent.seam import HostTools
    from plan_widgets.ipython.kernel.tools import SERVER, KernelTools, prompt

    specs = KernelTools("flowparts", "analysis.ipynb", None).specs()
    host = HostTools(tools=specs, server=SERVER, notebook="analysis.ipynb")
    return {"tools": specs, "tool_server": SERVER,
            "system_prompt_append": prompt("analysis.ipynb", host),
            "screen": _screen, "screened_tools": tuple(EDIT_TOOLS.split("|"))}


async def _screen(request: Any) -> None:
    return None


def _session_options(cwd: str, env: dict[str, str], can_use_tool: Any,
                     mcp: bool = True) -> Any:
    """Exactly the options a session gives the SDK (``plan_widgets.agent.sdk._options``);
    without the kernel tools' MCP server if not ``mcp``."""
    import uuid

    from plan_widgets.agent import sdk
    from plan_widgets.agent.seam import ClientConfig

    t = tempfile.mkdtemp(prefix="flowparts-")
    env = {**env, "TMPDIR": t, "TMP": t, "TEMP": t, "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
    config = ClientConfig(cwd=cwd, mode="default", can_use_tool=can_use_tool, env=env,
                          session_id=str(uuid.uuid4()), stderr=lambda line: None,
                          file_checkpointing=True, **{**_host(), **({} if mcp else {"tools": ()})})
    return sdk._options(config, can_use_tool)


async def _hook(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
    return {}


def _options(variant: str, cwd: str, env: dict[str, str], can_use_tool: Any) -> Any:
    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, create_sdk_mcp_server

    if variant.startswith("session"):
        return _session_options(cwd, env, can_use_tool, mcp=variant == "session")
    extra: dict[str, Any] = {}
    env = dict(env)
    parts = {"hook", "tasks", "checkpoint", "prompt", "tmpdir", "mcp", "replay", "subtext",
             "stderr", "sid"} if variant == "all" else {variant}
    if "hook" in parts:
        extra["hooks"] = {"PreToolUse": [HookMatcher(matcher=EDIT_TOOLS, hooks=[_hook])]}
    if "tasks" in parts:
        env["CLAUDE_CODE_ENABLE_TODO_TOOLS"] = "1"
    if "checkpoint" in parts:
        extra["enable_file_checkpointing"] = True
    if "prompt" in parts:
        extra["system_prompt"] = {"type": "preset", "preset": "claude_code", "append": _prompt()}
    if "tmpdir" in parts:
        t = tempfile.mkdtemp(prefix="flowparts-")
        env.update({"TMPDIR": t, "TMP": t, "TEMP": t})
    if "mcp" in parts:  # the kernel tools, as the in-process MCP server
        from plan_widgets.agent import sdk

        specs = _host()["tools"]
        extra["mcp_servers"] = {"kernel": create_sdk_mcp_server(
            "kernel", tools=[sdk._sdk_tool(t) for t in specs])}
    if "replay" in parts:
        extra["extra_args"] = {"replay-user-messages": None}
    if "subtext" in parts:
        extra["forward_subagent_text"] = True
    if "stderr" in parts:
        extra["stderr"] = lambda line: None
    if "sid" in parts:
        import uuid

        extra["session_id"] = str(uuid.uuid4())
    return ClaudeAgentOptions(cwd=cwd, permission_mode="default", can_use_tool=can_use_tool,
                              include_partial_messages=True, env=env, **extra)


async def flow(variant: str, cwd: str) -> dict[str, float]:
    """The bare plan flow (as ``_bare.plan_flow``) with ``variant``'s part added."""
    from claude_agent_sdk import (
        ClaudeSDKClient,
        PermissionResultAllow,
        PermissionUpdate,
        ResultMessage,
    )

    from plan_widgets.scripted import ScriptedModel

    got: dict[str, float] = {}

    async def can_use_tool(name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        if name == "ExitPlanMode":
            got["callback"] = time.monotonic()
            return PermissionResultAllow(updated_permissions=[
                PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")])
        return PermissionResultAllow()

    t0 = time.monotonic()
    log = Path(cwd) / "requests.jsonl" if variant in ("reqlog", "all") or variant.startswith(
        "session") else None
    model = await ScriptedModel.astart(PLAN, log_path=log, cwd=cwd)
    t_model = time.monotonic()
    client = ClaudeSDKClient(_options(variant, cwd, dict(model.env()), can_use_tool))
    if variant == "pgroup" or variant.startswith("session"):  # in its own process group
        from claude_agent_sdk._internal.transport import subprocess_cli

        from plan_widgets.agent import procgroup

        with procgroup.own_process_group(subprocess_cli):
            await client.connect()
    else:
        await client.connect()
    t_connect = time.monotonic()
    await client.set_permission_mode("plan")
    t_mode = time.monotonic()
    await client.query("Add a greeting script")
    async for msg in client.receive_response():
        if isinstance(msg, ResultMessage):
            got["end"] = time.monotonic()
    await client.disconnect()
    await model.astop()
    assert os.path.exists(os.path.join(cwd, "hello.py")), variant
    return {"to_callback": got["callback"] - t0, "connected": t_connect - t0,
            "cli_init": t_connect - t_model,
            "mode_to_callback": got["callback"] - t_mode,
            "approved_to_end": got["end"] - got["callback"]}


VARIANTS = ["bare", "hook", "tasks", "checkpoint", "prompt", "tmpdir", "reqlog", "mcp", "replay",
            "subtext", "stderr", "sid", "pgroup", "all", "session", "session-mcp"]


async def run(reps: int, variants: list[str]) -> dict[str, dict[str, float]]:
    samples: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
    with tempfile.TemporaryDirectory(prefix="flowparts-") as root:
        n = 0
        for v in variants:  # warm-up, not counted
            n += 1
            os.mkdir(f"{root}/{n}")
            await flow(v, f"{root}/{n}")
        for i in range(reps):
            order = variants[i % len(variants):] + variants[:i % len(variants)]
            for v in order:
                n += 1
                os.mkdir(f"{root}/{n}")
                for key, x in (await flow(v, f"{root}/{n}")).items():
                    samples[v].setdefault(key, []).append(x)
            print(f"rep {i + 1}/{reps}", file=sys.stderr, flush=True)
    out = {v: {k: round(median(xs) * 1000, 1) for k, xs in s.items()}
           for v, s in samples.items()}
    for v, s in samples.items():  # paired: against the bare run of the same repetition
        for k in ("to_callback", "connected", "cli_init", "approved_to_end"):
            out[v][f"{k}_vs_bare"] = round(median(
                x - b for x, b in zip(s[k], samples["bare"][k], strict=True)) * 1000, 1)
    return out


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    variants = ["bare", *(v for v in sys.argv[2].split(",") if v != "bare")] if len(
        sys.argv) > 2 else VARIANTS
    print(json.dumps({"load": os.getloadavg(), "medians_ms": asyncio.run(run(reps, variants))},
                     indent=1))


if __name__ == "__main__":
    main()
