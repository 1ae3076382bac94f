"""Figure 1's timeline inside the kernel: where the time to the plan card goes.

``python -m benchmarks._flowtrace [REPS]`` starts a benchmark kernel, wraps the session's and
the SDK's steps there (:func:`install`, in that kernel only, never by the product itself) with
``time.monotonic()`` stamps, and runs, interleaved, the widget plan flow, the same flow with
``--no-kernel-tools`` and the bare script's flow inside the same kernel. It prints the medians
of each segment: the kernel's own steps (before the scripted model's spawn, between the model
and the CLI, from ``initialize``'s answer to the prompt) and the CLI's (its start until it
answers ``initialize``, the prompt until the ``ExitPlanMode`` request is read), and the
kernel's CPU time while the CLI starts.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
import time
from collections import defaultdict
from statistics import median
from typing import Any

events: list[tuple[float, str, float]] = []
"""(time, label, the kernel's CPU time) for each step seen (inside the kernel)."""


def mark(label: str) -> None:
    events.append((time.monotonic(), label, time.process_time()))


def _wrap(owner: Any, name: str, label: str) -> None:
    fn = getattr(owner, name)
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def stamped_async(*a: Any, **k: Any) -> Any:
            mark(label + ":in")
            try:
                return await fn(*a, **k)
            finally:
                mark(label + ":out")
        setattr(owner, name, stamped_async)
        return

    @functools.wraps(fn)
    def stamped(*a: Any, **k: Any) -> Any:
        mark(label + ":in")
        try:
            return fn(*a, **k)
        finally:
            mark(label + ":out")
    setattr(owner, name, stamped)


def _message(data: str) -> str:
    """What one line written to the CLI is (its type, and a control message's kind)."""
    try:
        d = json.loads(data)
    except ValueError:
        return "?"
    kind = str(d.get("type"))
    if kind == "control_request":
        kind += " " + str((d.get("request") or {}).get("subtype"))
    elif kind == "control_response":
        r = (d.get("response") or {}).get("response") or {}
        kind += " " + ("mcp" if "mcp_response" in r else str(r.get("behavior", "")))
    return kind


def install() -> None:
    """Stamp the steps (in the kernel; once)."""
    from claude_agent_sdk._internal.query import Query
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    from plan_widgets.agent import lifecycle, procgroup, sdk, session
    from plan_widgets.scripted import ScriptedModel

    for owner, name, label in (
        (lifecycle.Lifecycle, "start", "life.start"), (lifecycle, "EventLog", "EventLog"),
        (lifecycle, "ScratchDir", "ScratchDir"), (ScriptedModel, "astart", "model"),
        (sdk.SdkClient, "connect", "SdkClient.connect"), (session.Session, "emit", "emit"),
        (procgroup._AnyioProxy, "open_process", "spawn"), (Query, "initialize", "initialize"),
        (SubprocessCLITransport, "connect", "transport.connect"),
    ):
        _wrap(owner, name, label)
    spawn_handler = Query._spawn_control_request_handler

    def request_read(self: Any, request: dict[str, Any]) -> None:
        req = request.get("request") or {}
        what = str(req.get("subtype"))
        if what == "mcp_message":
            what += " " + str((req.get("message") or {}).get("method"))
        elif what == "can_use_tool":
            what += " " + str(req.get("tool_name"))
        mark(f"cli-> {what}")
        spawn_handler(self, request)

    write = SubprocessCLITransport.write

    async def written(self: Any, data: str) -> None:
        mark(f"->cli {_message(data)}")
        await write(self, data)

    Query._spawn_control_request_handler = request_read  # type: ignore[method-assign]
    SubprocessCLITransport.write = written  # type: ignore[method-assign]


def take() -> str:
    out = json.dumps(events)
    events.clear()
    return out


# -- the driver (outside the kernel) -------------------------------------------------------------

SEGMENTS = (
    ("kernel: cell sent -> scripted model spawned", None, "model:in"),
    ("scripted model's start", "model:in", "model:out"),
    ("kernel: model up -> CLI spawned", "model:out", "spawn:in"),
    ("CLI: spawned -> initialize answered", "spawn:in", "initialize:out"),
    ("  of it: spawned -> the CLI's MCP initialize", "spawn:in", "cli-> mcp_message initialize"),
    ("kernel: connected -> prompt written", "initialize:out", "->cli user"),
    ("CLI: prompt written -> ExitPlanMode read", "->cli user", "cli-> can_use_tool ExitPlanMode"),
    ("cell sent -> ExitPlanMode read", None, "cli-> can_use_tool ExitPlanMode"),
)


def _segments(evs: list[list[Any]], t0: float) -> dict[str, float]:
    first: dict[str, tuple[float, float]] = {}
    for t, label, cpu in evs:
        first.setdefault(label, (t - t0, cpu))
    out = {}
    for title, a, b in SEGMENTS:
        if b in first and (a is None or a in first):
            out[title] = first[b][0] - (first[a][0] if a is not None else 0.0)
    if "spawn:out" in first and "initialize:out" in first:
        out["kernel CPU while the CLI starts"] = first["initialize:out"][1] - first["spawn:out"][1]
    return out


def _widget(b: Any, k: Any, name: str, flags: str = "") -> dict[str, float]:
    from ._figures import PLAN, footers, new_button
    from ._kernel import wait_card

    cwd = b.fresh_dir("w")
    k.execute("_T.take()")
    since = k.mark()
    t0 = time.monotonic()
    k.start(f"%%claude --session {name} --cwd {cwd} --scripted {PLAN} --plan --mode default"
            f"{flags}\nAdd a greeting script")
    card = wait_card(k, "plan", since, timeout=120)
    k.click(k.wait_until(lambda: new_button(k, "Approve, auto-accept edits", since), 30))
    k.wait_until(lambda: footers(k, since), 120, "turn end")
    out = _segments(json.loads(k.execute("print(_T.take())")["text"]), t0)
    out["cell sent -> plan card on iopub"] = card["_t"] - t0
    k.execute(f"await plan_widgets.get({name!r}).close()", timeout=60)
    return out


def _bare(b: Any, k: Any) -> dict[str, float]:
    from ._figures import PLAN

    k.execute("_T.take()")
    t0 = time.monotonic()
    text = k.execute("import benchmarks._bare as _B\n"
                     f"_o = await _B.plan_flow({PLAN!r}, {str(b.fresh_dir('k'))!r})\n"
                     "print(_T.take())", timeout=120)["text"]
    return _segments(json.loads(text), t0)


def main() -> None:
    from ._figures import Bench, kernel_setup

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    b = Bench(reps, False, print)
    k = b.kernel()
    flows = {"widgets": lambda i: _widget(b, k, f"w{i}"),
             "widgets --no-kernel-tools": lambda i: _widget(b, k, f"n{i}", " --no-kernel-tools"),
             "bare flow in the kernel": lambda i: _bare(b, k)}
    got: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    try:
        kernel_setup(k, probe=True)
        k.execute("import benchmarks._flowtrace as _T\n_T.install()")
        for run in flows.values():  # warm-up, not counted
            run(-1)
        for i in range(reps):
            for who, run in flows.items():
                for key, v in run(i).items():
                    got[who][key].append(v)
            print(f"rep {i + 1}/{reps}", file=sys.stderr, flush=True)
    finally:
        k.shutdown()
    report(reps, got, scale=1000)


def report(reps: int, got: dict[str, dict[str, list[float]]], scale: float = 1) -> None:
    """Each flow's phases: median and range in ms (``scale``: from the samples' unit)."""
    import os

    print(f"{reps} repetitions, medians in ms (1-minute load {os.getloadavg()[0]:.1f})")
    for who, segs in got.items():
        print(who)
        for title, xs in segs.items():
            print(f"  {median(xs) * scale:7.1f}  {title} (range {min(xs) * scale:.0f}-"
                  f"{max(xs) * scale:.0f})")


if __name__ == "__main__":
    main()
