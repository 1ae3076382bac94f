"""Figure 1 taken apart: what in the session's setup of the CLI costs time before the
``ExitPlanMode`` callback (issue 25, item 8).

``python -m benchmarks._flowparts [REPS]`` runs the bare plan flow (``benchmarks/_bare.py``)
once as it is and once with each thing the session gives the CLI and the bare script does not
(one at a time, then all of them), the variants interleaved, the order rotated every
repetition, one process (the SDK imported once). Per variant it prints the medians of the
time to the callback and of its part after plan mode is in force (the part figure 1's phases
put the difference in).
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


async def _hook(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
    return {}


def _options(variant: str, cwd: str, env: dict[str, str], can_use_tool: Any) -> Any:
    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

    extra: dict[str, Any] = {}
    env = dict(env)
    parts = {"hook", "tasks", "checkpoint", "prompt", "tmpdir"} if variant == "all" else {
        variant}
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
    log = Path(cwd) / "requests.jsonl" if variant in ("reqlog", "all") else None
    model = await ScriptedModel.astart(PLAN, log_path=log, cwd=cwd)
    client = ClaudeSDKClient(_options(variant, cwd, dict(model.env()), can_use_tool))
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
            "mode_to_callback": got["callback"] - t_mode}


VARIANTS = ["bare", "hook", "tasks", "checkpoint", "prompt", "tmpdir", "reqlog", "all"]


async def run(reps: int) -> dict[str, dict[str, float]]:
    samples: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="flowparts-") as root:
        n = 0
        for v in VARIANTS:  # warm-up, not counted
            n += 1
            os.mkdir(f"{root}/{n}")
            await flow(v, f"{root}/{n}")
        for i in range(reps):
            order = VARIANTS[i % len(VARIANTS):] + VARIANTS[:i % len(VARIANTS)]
            for v in order:
                n += 1
                os.mkdir(f"{root}/{n}")
                for key, x in (await flow(v, f"{root}/{n}")).items():
                    samples[v].setdefault(key, []).append(x)
            print(f"rep {i + 1}/{reps}", file=sys.stderr, flush=True)
    return {v: {k: round(median(xs) * 1000, 1) for k, xs in s.items()}
            for v, s in samples.items()}


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(json.dumps({"load": os.getloadavg(), "medians_ms": asyncio.run(run(reps))}, indent=1))


if __name__ == "__main__":
    main()
