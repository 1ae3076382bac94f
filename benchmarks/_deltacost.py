"""What one streamed delta costs, counted and timed part by part (figure 4, taken apart).

``python -m benchmarks._deltacost [--kernel] [--cpu] WAY...`` streams figure 4's 200 KB answer
(5,000 deltas) over the scripted model and the real CLI, and reports per delta (the long turn
minus a one-line turn) for each WAY:

- ``bare``: the bare SDK (``benchmarks._bare.Streamer``); ``session``: a session with no view
  (``Session.ask``); ``view``: a session with the widget turn view (without ``--kernel``, with
  ipywidgets' no-kernel comms: the widgets' state is built, not sent);
- with ``--kernel``, the same run inside a benchmark kernel (its loop, its iopub thread, real
  widget comms), and two more ways: ``cell`` (a session started by a ``%%claude`` cell, each
  turn a cell, as figure 4 measures it) and ``cellask`` (that session's turn from code:
  figure 4's "no view").

By default under ``cProfile``: the Python function calls per delta, by part of the code and by
function (a count that hardly depends on how busy the machine is; how the SDK's calls batch
into loop iterations still moves it by a few percent), and the difference of each way to the
first. With ``--cpu``, no profiler: the thread's CPU per delta (noisy) and, timed by a
class-level wrapper around each (benchmark only, like ``_probe``; the wrapper's own cost taken
out), the session's ``translate`` and ``Runner.on_signal`` and the view's
``StreamingMarkdown.flush``; also the garbage collector's share.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ._figures import DELTAS, STREAM

PARTS = (  # (label, path fragment), first match wins
    ("plan_widgets (session, runner, turn)", "plan_widgets/agent"),
    ("plan_widgets (widgets)", "plan_widgets/widgets"),
    ("plan_widgets (render)", "plan_widgets/render"),
    ("plan_widgets (model, store, other)", "plan_widgets"),
    ("ipywidgets / traitlets / comm", "ipywidgets"),
    ("ipywidgets / traitlets / comm", "traitlets"),
    ("ipywidgets / traitlets / comm", "/comm/"),
    ("claude_agent_sdk", "claude_agent_sdk"),
    ("anyio", "anyio"),
    ("asyncio", "asyncio"),
    ("json", "json"),
)


def _part(filename: str) -> str:
    for label, frag in PARTS:
        if frag in filename:
            return label
    return "builtins" if filename == "~" else "other"


def _calls(prof: cProfile.Profile) -> tuple[int, Counter[str], Counter[str]]:
    st = pstats.Stats(prof)
    total = 0
    parts: Counter[str] = Counter()
    funcs: Counter[str] = Counter()
    for (f, line, name), v in st.stats.items():  # type: ignore[attr-defined]
        n = v[1]  # primitive and recursive calls alike
        total += n
        parts[_part(f)] += n
        short = f.split("site-packages/")[-1].split("i35-claims/")[-1]
        funcs[f"{short}:{line}({name})"] += n
    return total, parts, funcs


def _thread_cpu() -> tuple[float, float]:
    """CPU seconds of this thread, and of the process's other threads (an iopub thread...)."""
    import psutil

    mine = time.thread_time()
    total = sum(t.user_time + t.system_time for t in psutil.Process().threads())
    return mine, total - mine


class _Parts:
    """CPU time inside the session's and the view's own code, by part: a class-level wrapper
    around each (benchmark only, like ``_probe``), on the thread that runs the loop."""

    WRAPPED = (  # (label, module, class or None, attribute)
        ("session: translate an SDK message (sdk.translate)", "plan_widgets.agent.sdk", None,
         "translate"),
        ("session: route a signal, the turn and the view take the text (Runner.on_signal)",
         "plan_widgets.agent.runner", "Runner", "on_signal"),
        ("view: updates of the page (StreamingMarkdown.flush)", "plan_widgets.widgets.markdown",
         "StreamingMarkdown", "flush"),
    )

    def __init__(self) -> None:
        import importlib

        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._undo: list[Any] = []
        self._depth = 0
        for label, mod, cls, attr in self.WRAPPED:
            owner = importlib.import_module(mod)
            if cls is not None:
                owner = getattr(owner, cls)
            self._wrap(owner, attr, label)

    def _wrap(self, owner: Any, attr: str, label: str) -> None:
        import functools

        fn = getattr(owner, attr)
        clock = time.thread_time
        parts = self

        @functools.wraps(fn)
        def timed(*a: Any, **kw: Any) -> Any:
            if parts._depth:  # inside another timed part: counted there
                return fn(*a, **kw)
            parts._depth += 1
            t = clock()
            try:
                return fn(*a, **kw)
            finally:
                parts.spent[label] = parts.spent.get(label, 0.0) + clock() - t
                parts.calls[label] = parts.calls.get(label, 0) + 1
                parts._depth -= 1

        setattr(owner, attr, timed)
        self._undo.append((owner, attr, fn))

    def remove(self) -> None:
        for owner, attr, fn in self._undo:
            setattr(owner, attr, fn)

    @staticmethod
    def overhead(n: int = 20000) -> float:
        """Seconds the wrapper itself adds to one call (the thread clock read twice...)."""
        import types

        box = types.SimpleNamespace(f=lambda: None)
        parts = _Parts.__new__(_Parts)
        parts.spent, parts.calls, parts._undo, parts._depth = {}, {}, [], 0
        t = time.thread_time()
        for _ in range(n):
            box.f()
        bare = time.thread_time() - t
        parts._wrap(box, "f", "x")
        t = time.thread_time()
        for _ in range(n):
            box.f()
        return max(0.0, (time.thread_time() - t - bare) / n)


class _GcClock:
    """Time spent in the garbage collector, by generation (gc.callbacks)."""

    def __init__(self) -> None:
        self.spent = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._t = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t = time.thread_time()
        else:
            self.spent[info["generation"]] += time.thread_time() - self._t
            self.runs[info["generation"]] += 1


async def _profiled(run: Any, profile: bool = True) -> tuple[Any, ...]:
    start(profile)
    try:
        await run()
    finally:
        out = stop()
    return out


async def _bare(cwd: str) -> Any:
    from ._bare import Streamer

    s = Streamer()
    await s.turn(STREAM, cwd, "tiny warm-up")

    async def turn(prompt: str) -> None:
        out = await s.turn(STREAM, cwd, prompt)
        if prompt.startswith("stream"):
            assert out["deltas"] >= DELTAS, out

    return turn, s.close


async def _session(cwd: str, with_view: bool) -> Any:
    from plan_widgets.agent.session import Session
    from plan_widgets.model.options import SessionOptions

    s = Session(SessionOptions(name="d", cwd=cwd, scripted=STREAM, kernel_tools=False))
    await s.ask("tiny warm-up").wait(120)
    control = None
    if with_view:
        from plan_widgets.widgets.control import ControlBar
        from plan_widgets.widgets.shared import warm

        warm()
        control = ControlBar(s)

    async def turn(prompt: str) -> None:
        view = None
        if with_view:
            from plan_widgets.widgets.turn import WidgetTurnView

            view = WidgetTurnView(s, prompt, control)
        t = s.ask(prompt, view=view)
        await t.wait(300)
        assert t.ok, t.error
        if prompt.startswith("stream"):
            assert len(t.text) >= 200_000, len(t.text)

    async def close() -> None:
        await s.close()

    return turn, close


async def measure(way: str, profile: bool = True) -> dict[str, Any]:
    cwd = tempfile.mkdtemp(prefix=f"deltacost-{way}-")
    (Path(cwd) / ".keep").write_text("", encoding="utf-8")
    turn, close = await (_bare(cwd) if way == "bare" else _session(cwd, way == "view"))
    try:
        small = await _profiled(lambda: turn("tiny baseline"), profile)
        big = await _profiled(lambda: turn("stream the long answer"), profile)
    finally:
        await close()
    return summed(way, small, big)


def report(r: dict[str, Any], top: int) -> None:
    print(f"== {r['way']}: {r['calls']:.1f} Python calls per delta "
          f"(CPU per delta, noisy: this thread {r['cpu_us']:.0f} µs, other threads "
          f"{r['other_us']:.0f} µs); of it in the GC by generation "
          f"{', '.join(f'{x:.1f}' for x in r['gc_us'])} µs ({r['gc_runs']} runs)")
    for label, us in r.get("timed_us", {}).items():
        n = r["timed_calls"].get(label, 0)
        print(f"   {us:7.2f} µs  {label} ({n:.0f} calls in the long turn)")
    for label, n in r["parts"].most_common():
        if abs(n) / DELTAS >= 0.05:
            print(f"   {n / DELTAS:7.2f}  {label}")
    print("   top functions (calls per delta):")
    for name, n in r["funcs"].most_common(top):
        print(f"   {n / DELTAS:7.2f}  {name}")


def difference(a: dict[str, Any], b: dict[str, Any], top: int) -> None:
    """What ``b`` calls more than ``a``, per delta, by function."""
    diff = Counter({k: b["funcs"][k] - a["funcs"].get(k, 0) for k in b["funcs"]})
    for k in a["funcs"]:
        if k not in b["funcs"]:
            diff[k] = -a["funcs"][k]
    print(f"== {b['way']} - {a['way']}: {b['calls'] - a['calls']:+.1f} calls per delta")
    for label in sorted(set(a["parts"]) | set(b["parts"])):
        d = (b["parts"].get(label, 0) - a["parts"].get(label, 0)) / DELTAS
        if abs(d) >= 0.05:
            print(f"   {d:+7.2f}  {label}")
    print("   most added / removed functions:")
    for name, n in [*diff.most_common(top), *reversed(diff.most_common()[-8:])]:
        if abs(n) / DELTAS >= 0.05:
            print(f"   {n / DELTAS:+7.2f}  {name}")


def in_kernel(ways: list[str], profile: bool = True) -> list[dict[str, Any]]:
    """The same, inside a benchmark kernel (its loop, its iopub thread, real widget comms)."""
    import json

    from ._figures import Bench, kernel_setup

    b = Bench(1, True, print)
    k = b.kernel()
    try:
        kernel_setup(k)
        k.execute("import benchmarks._deltacost as _D, json as _j", timeout=60)
        out = []
        for way in ways:
            if way in ("cell", "cellask"):
                out.append(_cell_way(k, b, way, profile))
                continue
            text = k.execute(f"_r = await _D.measure({way!r}, {profile})\n"
                             "print(_j.dumps(_D.jsonable(_r)))", timeout=600)["text"]
            r = json.loads(text.strip().splitlines()[-1])
            out.append({**r, "parts": Counter(r["parts"]), "funcs": Counter(r["funcs"])})
        return out
    finally:
        k.shutdown()


_open: dict[str, Any] = {}  # in the kernel: what start() began; in the driver: names


def start(profile: bool) -> None:
    """Start counting in this kernel (the driver runs the turn as a cell in between)."""
    import gc

    prof = cProfile.Profile()
    clock = _GcClock()
    gc.callbacks.append(clock)
    # timed parts only without the profiler (whose overhead would swamp them)
    if not profile and "overhead" not in _open:
        _open["overhead"] = _Parts.overhead()
    _open.update(prof=prof if profile else None, clock=clock,
                 parts=None if profile else _Parts(), cpu=_thread_cpu())
    if profile:
        prof.enable()


def stop() -> tuple[int, Counter[str], Counter[str], float, float, _GcClock, dict[str, float]]:
    import gc

    prof = _open["prof"]
    if prof is not None:
        prof.disable()
    (m0, o0), (m1, o1) = _open["cpu"], _thread_cpu()
    gc.callbacks.remove(_open["clock"])
    timed = _open["parts"]
    if timed is not None:
        timed.remove()
    total, parts, funcs = _calls(prof) if prof is not None else (0, Counter(), Counter())
    over = _open.get("overhead", 0.0)  # the wrapper's own cost, taken out of each part
    return (total, parts, funcs, m1 - m0, o1 - o0, _open["clock"],
            {**{k: v - over * timed.calls[k] for k, v in timed.spent.items()},
             **{f"#{k}": float(n) for k, n in timed.calls.items()}}
            if timed is not None else {})


def summed(way: str, small: Any, big: Any) -> dict[str, Any]:
    parts = Counter({k: big[1][k] - small[1].get(k, 0) for k in big[1]})
    funcs = Counter({k: big[2][k] - small[2].get(k, 0) for k in big[2]})
    return {"way": way, "calls": (big[0] - small[0]) / DELTAS, "parts": parts, "funcs": funcs,
            "cpu_us": (big[3] - small[3]) / DELTAS * 1e6,
            "other_us": (big[4] - small[4]) / DELTAS * 1e6,
            "gc_us": [(b - a) / DELTAS * 1e6
                      for a, b in zip(small[5].spent, big[5].spent, strict=True)],
            "gc_runs": big[5].runs,
            "timed_us": {k: (v - small[6].get(k, 0.0)) / DELTAS * 1e6
                         for k, v in big[6].items() if not k.startswith("#")},
            "timed_calls": {k[1:]: v for k, v in big[6].items() if k.startswith("#")}}


def _cell_way(k: Any, b: Any, way: str, profile: bool) -> dict[str, Any]:
    """A session started by a ``%%claude`` cell, as figure 4 measures it: each turn a cell
    (``cell``), or ``Session.ask`` from code (``cellask``: figure 4's "no view")."""
    import json

    from ._figures import footers

    name = f"c{len(_open)}"
    _open[name] = True
    cwd = b.fresh_dir("dc")
    k.execute(f"%%claude --session {name} --cwd {cwd} --scripted {STREAM}\ntiny warm-up", 120)
    got = []
    for prompt in ("tiny baseline", "stream the long answer"):
        k.execute(f"_D.start({profile})")
        if way == "cell":
            since = k.mark()
            k.execute(f"%%claude --session {name}\n{prompt}", timeout=300)
            k.wait_until(lambda s=since: footers(k, s), 60, "turn end")
        else:
            k.execute(f"await plan_widgets.get({name!r}).ask({prompt!r}).wait(300)", 330)
        text = k.execute("_x = _D.stop()\nprint(_j.dumps(_D.jsonable_raw(_x)))", 120)["text"]
        got.append(json.loads(text.strip().splitlines()[-1]))
    small, big = ((r["total"], Counter(r["parts"]), Counter(r["funcs"]), r["main"], r["other"],
                   _clock(r["gc"], r["gc_runs"]), r["timed"]) for r in got)
    return summed(way, small, big)


def _clock(spent: list[float], runs: list[int]) -> _GcClock:
    c = _GcClock()
    c.spent, c.runs = spent, runs
    return c


def jsonable_raw(x: Any) -> dict[str, Any]:
    return {"total": x[0], "parts": dict(x[1]), "funcs": dict(x[2]), "main": x[3],
            "other": x[4], "gc": x[5].spent, "gc_runs": x[5].runs, "timed": x[6]}


def jsonable(r: dict[str, Any]) -> dict[str, Any]:
    return {**r, "parts": dict(r["parts"]), "funcs": dict(r["funcs"])}


def main() -> None:
    args = sys.argv[1:]
    kernel = "--kernel" in args
    ways = [a for a in args if not a.startswith("--")] or ["bare", "session", "view"]
    top = 25
    profile = "--cpu" not in args  # --cpu: no profiler, CPU time only (noisy)
    results = (in_kernel(ways, profile) if kernel
               else [asyncio.run(measure(way, profile)) for way in ways])
    for r in results:
        report(r, top)
    for r in results[1:]:
        difference(results[0], r, top)


if __name__ == "__main__":
    main()
