"""The figures of issue 7 (and issue 15's card and streaming goals), each measured beside
its anchor in one run (issue 15's soak run: :mod:`._soak`).

Every figure returns :class:`Row` s: a measured median, an anchor median (when there is one),
the goal, and the raw samples. Timing uses ``time.monotonic()`` (CLOCK_MONOTONIC, shared by
every process on the machine), so the driver's clock and the kernel's probe compare directly.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._kernel import ROOT, BenchKernel, wait_card

SCRIPTS = Path(__file__).parent / "scripts"
PLAN = str(SCRIPTS / "plan_approve.yaml")
TINY = str(SCRIPTS / "tiny.yaml")
STREAM = str(SCRIPTS / "stream.yaml")
ANSWER_BYTES = 200_000
DELTAS = 5_000
ANCHOR_VENV = Path(__file__).parent / ".venv-anchors"
OPENS_BEFORE_CARD_TODAY = 21.0
"""Widget ``comm_open``s before a plan card, measured before issue 15 (docs/cli.md#kernel)."""


@dataclass
class Row:
    figure: str
    metric: str
    unit: str
    value: float | None
    anchor: float | None = None
    anchor_name: str = ""
    goal: str = ""
    met: bool | None = None
    samples: list[float] = field(default_factory=list)
    anchor_samples: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.anchor:
            return None
        return self.value / self.anchor


def median(xs: Sequence[float]) -> float:
    """The median (a figure without samples fails, and says so in its row)."""
    if not xs:
        raise ValueError("no samples")
    return float(statistics.median(xs))


def p95(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("no samples")
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


class Bench:
    """Shared state of one run: a scratch folder, the options, a log line printer."""

    def __init__(self, repeat: int, quick: bool, log: Callable[[str], None]) -> None:
        self.repeat = repeat
        self.quick = quick
        self.log = log
        self.work = Path(tempfile.mkdtemp(prefix="pw-bench-"))
        self.home = self.work / ".home"
        self.home.mkdir()
        self._n = 0

    def fresh_dir(self, prefix: str) -> Path:
        self._n += 1
        d = self.work / f"{prefix}{self._n}"
        d.mkdir()
        return d

    def env(self) -> dict[str, str]:
        """The environment of a bare-SDK process: like the kernel's (scratch HOME, no keys)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE_")) and k != "CLAUDECODE"}
        env.update({"HOME": str(self.home), "PYTHONPATH": str(ROOT)})
        return env

    def kernel(self, python: str | None = None,
               env: dict[str, str] | None = None) -> BenchKernel:
        """A fresh kernel in the scratch folder (its HOME is the bare scripts' HOME too).

        Retried: on a shared machine another process can take the ports jupyter_client picked
        before the kernel binds them ("Address already in use")."""
        for attempt in range(3):
            try:
                return BenchKernel(self.work, python=python, env=env)
            except RuntimeError:
                if attempt == 2:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")


class Bare:
    """The warm bare-SDK process (``python -m benchmarks._bare serve``)."""

    def __init__(self, b: Bench) -> None:
        self.p = subprocess.Popen([sys.executable, "-m", "benchmarks._bare", "serve"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd=b.work, env=b.env())
        assert json.loads(self._line(120)).get("ready")

    def _line(self, timeout: float) -> str:
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        if not sel.select(timeout):
            raise TimeoutError("the bare SDK script did not answer in time")
        line = self.p.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("the bare SDK script exited")
        return line

    def call(self, timeout: float = 120, **cmd: Any) -> dict[str, Any]:
        self.p.stdin.write(json.dumps(cmd) + "\n")  # type: ignore[union-attr]
        self.p.stdin.flush()  # type: ignore[union-attr]
        out = json.loads(self._line(timeout))
        if "error" in out:
            raise RuntimeError(f"bare SDK: {out['error']}")
        return out

    def pid(self) -> int:
        return self.p.pid

    def close(self) -> None:
        try:
            self.p.stdin.close()  # type: ignore[union-attr]
            self.p.wait(30)
        except Exception:
            self.p.kill()
            self.p.wait(10)


# -- helpers over iopub --------------------------------------------------------------------------

def _state(m: dict[str, Any]) -> dict[str, Any]:
    return (m["content"].get("data") or {}).get("state") or {}


def new_button(k: BenchKernel, description: str, since: int) -> str | None:
    """The first button ``description`` opened since message ``since`` that a box holds (a
    card's): a plan card's buttons are opened ahead, while the model writes the plan, and
    one is no card's (nor clickable) until the card takes it (issue 46, kinds/plan_spares)."""
    with k._lock:
        found: list[str] = []
        for m in k.messages[since:]:
            s = _state(m)
            if m["header"]["msg_type"] == "comm_open" and s.get(
                    "_model_name") == "ButtonModel" and s.get("description") == description:
                found.append(str(m["content"]["comm_id"]))
            held = [c for c in found if f"IPY_MODEL_{c}" in (s.get("children") or ())]
            if held:
                return held[0]
    return None


def is_footer(m: dict[str, Any]) -> bool:
    """The turn's closing line (duration · tokens): its footer HTML widget, opened with it."""
    if m["header"]["msg_type"] not in ("comm_open", "comm_msg"):
        return False
    v = _state(m).get("value")
    return isinstance(v, str) and " tokens" in v and ("✓" in v or "✗" in v)


def footers(k: BenchKernel, since: int) -> list[dict[str, Any]]:
    with k._lock:
        return [m for m in k.messages[since:] if is_footer(m)]


def has_text(needle: str) -> Callable[[dict[str, Any]], bool]:
    def pred(m: dict[str, Any]) -> bool:
        t = m["header"]["msg_type"]
        if t not in ("comm_open", "comm_msg"):
            return False
        return needle in json.dumps(_state(m).get("outputs") or "")
    return pred


def kernel_setup(k: BenchKernel, probe: bool = False) -> None:
    code = "%load_ext plan_widgets\nimport plan_widgets"
    if probe:
        code += "\nimport benchmarks._probe as _P\n_P.install()"
    k.execute(code, timeout=120)


# -- figure 1 and 2: plan -> approve -> write, widgets against the bare SDK ------------------------

def widget_flow(b: Bench, k: BenchKernel, name: str) -> dict[str, Any]:
    cwd = b.fresh_dir("w")
    k.execute("_P.take()")  # forget what other flows in this kernel recorded
    since = k.mark()
    code = (f"%%claude --session {name} --cwd {cwd} --scripted {PLAN} --plan --mode default\n"
            "Add a greeting script")
    t0 = time.monotonic()
    k.start(code)
    card = wait_card(k, "plan", since, timeout=120)
    btn = k.wait_until(lambda: new_button(k, "Approve, auto-accept edits", since), 30, "button")
    t_click = time.monotonic()
    k.click(btn)
    end = k.wait_until(lambda: footers(k, since), 120, "turn end")[0]
    probe = json.loads(k.execute("print(_P.take())")["text"])
    arrival = [t for t, tool in probe["arrivals"] if tool == "ExitPlanMode"]
    written = [t for t, beh in probe["responses"] if t >= t_click and beh == "allow"]
    result = [t for t in probe["results"] if t >= written[0]]
    # phases from the session's own event log (epoch seconds -> this clock)
    evs = json.loads(k.execute(
        "import json as _j\nprint(_j.dumps([(e.ts, e.type, getattr(e, 'mode', None), "
        f"getattr(e, 'state', None)) for e in plan_widgets.get({name!r}).events]))")["text"])
    off = time.time() - time.monotonic()
    started = next(ts for ts, ty, _, _ in evs if ty == "session:started") - off
    connected = next(ts for ts, ty, m, st in evs if ty == "plan:mode" and st == "effective") - off
    assert (cwd / "hello.py").exists(), "the approved plan did not write hello.py"
    assert "✓" in _state(end)["value"], f"the turn failed: {_state(end)['value']}"
    k.execute(f"await plan_widgets.get({name!r}).close()", timeout=60)
    raw = k.raw_arrival.get(card["header"]["msg_id"], card["_t"])
    with k._lock:  # the widget models opened between the request read and the card's own
        upto = next(i for i, m in enumerate(k.messages) if m is card)
        opens = [m for m in k.messages[since:upto] if m["header"]["msg_type"] == "comm_open"
                 and _sent(m) - off >= arrival[0]]
    return {
        "to_card": card["_t"] - t0,
        "callback_to_card_raw": raw - arrival[0],
        "opens_before_card": len(opens),
        "open_names": [str(_state(m).get("_model_name")) for m in opens],
        "click_to_end": end["_t"] - t_click,
        "callback_to_card": card["_t"] - arrival[0],
        # the same, to the moment the kernel made the message (its header's date)
        "callback_to_card_sent": card["header"]["date"].timestamp() - off - arrival[0],
        "click_to_response": written[0] - t_click,
        # the Approve path's phases: the CLI's work, the turn's end in the kernel, iopub
        "answer_to_result": result[0] - written[0],
        "result_to_footer_sent": end["header"]["date"].timestamp() - off - result[0],
        "footer_sent_to_iopub": end["_t"] - (end["header"]["date"].timestamp() - off),
        "model_started": started - t0,
        "connected": connected - t0,
        "callback": arrival[0] - t0,
    }


def fig_flow(b: Bench) -> list[Row]:
    k = b.kernel()
    bare = Bare(b)
    w: dict[str, list[float]] = {}
    s: dict[str, list[float]] = {}
    ks: dict[str, list[float]] = {}
    opened: list[list[str]] = []  # each card: the models opened before it
    try:
        kernel_setup(k, probe=True)
        k.start_byte_counter()
        b.log("  warm-up (one flow each, not counted)")
        widget_flow(b, k, "warm")
        bare.call(cmd="flow", script=PLAN, cwd=str(b.fresh_dir("b")))
        for i in range(2 * b.repeat):  # cheap and noisy: twice the repetitions
            order = ["w", "s", "ks"] if i % 2 == 0 else ["ks", "s", "w"]
            for who in order:
                if who == "ks":  # diagnostic: the bare script's flow, run inside the kernel
                    out = json.loads(k.execute(
                        "import json as _j, benchmarks._bare as _B\n"
                        f"print(_j.dumps(await _B.plan_flow({PLAN!r}, "
                        f"{str(b.fresh_dir('k'))!r})))", timeout=120)["text"])
                    ks.setdefault("to_callback", []).append(out["to_callback"])
                    ks.setdefault("click_to_end", []).append(out["click_to_end"])
                elif who == "w":
                    res = widget_flow(b, k, f"f{i}")
                    opened.append(res.pop("open_names"))
                    for key, v in res.items():
                        w.setdefault(key, []).append(v)
                else:
                    out = bare.call(cmd="flow", script=PLAN, cwd=str(b.fresh_dir("b")))
                    assert out["wrote"], "the bare flow did not write hello.py"
                    s.setdefault("to_callback", []).append(out["to_callback"])
                    s.setdefault("click_to_end", []).append(out["click_to_end"])
                    for key, v in out["phases"].items():
                        s.setdefault(key, []).append(v)
            b.log(f"  rep {i + 1}: to card {w['to_card'][-1]:.3f} s vs bare "
                  f"{s['to_callback'][-1]:.3f} s; click->end {w['click_to_end'][-1]:.3f} s vs "
                  f"{s['click_to_end'][-1]:.3f} s")
    finally:
        bare.close()
        k.shutdown()
    def ms(xs: list[float]) -> str:
        return f"{median(xs) * 1000:.0f}"

    phases = (f"phases, widgets vs bare (ms from the start, medians): scripted model up "
              f"{ms(w['model_started'])} vs {ms(s['model_started'])}, CLI connected "
              f"{ms(w['connected'])} vs {ms(s['connected'])}, ExitPlanMode callback "
              f"{ms(w['callback'])} vs {ms(s['to_callback'])}, card on iopub {ms(w['to_card'])}; "
              f"the bare script's own flow run inside the kernel: callback at "
              f"{ms(ks['to_callback'])}")
    approve = (f"phases, widgets (ms, medians): click sent -> permission answer written to "
               f"the CLI {ms(w['click_to_response'])} (the click's way into the kernel and "
               f"the decision's record), -> the CLI's `result` read "
               f"{ms(w['answer_to_result'])} (the CLI's work), -> footer made (header date) "
               f"{ms(w['result_to_footer_sent'])} (the turn's end: its log line, the footer), "
               f"-> footer on iopub {ms(w['footer_sent_to_iopub'])}; the bare script's flow "
               f"run inside the kernel: {ms(ks['click_to_end'])}")
    rows = []
    for metric, wk, sk, goal in (  # issue 46 (1.10 and 1.25 before it)
        ("plan flow: start of the `%%claude --plan` cell -> plan card `comm_open` on iopub",
         "to_card", "to_callback", 1.0),
        ("plan flow: Approve click sent -> turn's end on iopub", "click_to_end", "click_to_end",
         1.0),
    ):
        r = Row("1", metric, "s", median(w[wk]), median(s[sk]),
                "bare `ClaudeSDKClient`, approving in code" if sk == "to_callback" else
                "bare: approval returned -> `ResultMessage`",
                f"ratio <= {goal}", samples=w[wk], anchor_samples=s[sk],
                note=phases if wk == "to_card" else approve)
        r.met = r.ratio is not None and r.ratio <= goal
        rows.append(r)
    sent = median(w["callback_to_card_sent"]) * 1000
    parsed = median(w["callback_to_card"]) * 1000
    for metric, key, note, limit in (  # the card: issue 46's goal (issue 35's was 10 ms)
        ("card latency: `can_use_tool` request read -> plan card `comm_open` on iopub (raw "
         "socket)", "callback_to_card_raw",
         f"until the kernel made the message (header date): {sent:.1f} ms; until the driver's "
         f"jupyter_client had parsed it and the ~{median(w['opens_before_card']):.0f} widget "
         f"comm_opens just before it: {parsed:.1f} ms", 8),
        ("card latency: click `comm_msg` sent -> permission answer written to the CLI",
         "click_to_response", "", 20),
    ):
        v = median(w[key])
        rows.append(Row("2", metric, "ms", v * 1000 if v is not None else None,
                        goal=f"median <= {limit} ms", met=v is not None and v <= limit / 1000,
                        samples=[x * 1000 for x in w[key]], note=note))
    counts = w["opens_before_card"]
    typical = Counter(" + ".join(f"{v} {k_.removesuffix('Model')}" for k_, v in
                                 sorted(Counter(names).items())) for names in opened)
    r = Row("2", "plan card: widget `comm_open`s sent between the `can_use_tool` request read "
            "and the card's own `comm_open`", "n", median(counts), OPENS_BEFORE_CARD_TODAY,
            "recorded before issue 15 (about 21, docs/cli.md#kernel)", "ratio <= 0.5",
            samples=counts, note=f"mostly: {typical.most_common(1)[0][0]} (header dates "
                                 "after the request read)")
    r.met = r.ratio is not None and r.ratio <= 0.5
    rows.append(r)
    return rows


# -- figure 3: load time and first turn -----------------------------------------------

_TIMED = ("import time as _t\n_a = _t.perf_counter()\n{stmt}\n"
          "print('ELAPSED', _t.perf_counter() - _a)")


def _timed_in_fresh_kernel(b: Bench, stmt: str, python: str | None = None) -> float:
    k = b.kernel(python=python)
    try:
        out = k.execute(_TIMED.format(stmt=stmt), timeout=120)
        for line in out["text"].splitlines():
            if line.startswith("ELAPSED"):
                return float(line.split()[1])
        raise RuntimeError(f"no timing from the kernel: {out['text'][-300:]}")
    finally:
        k.shutdown()


def anchors_python() -> str | None:
    p = ANCHOR_VENV / "bin" / "python"
    return str(p) if p.exists() else None


def _anchor_has(python: str, module: str) -> bool:
    r = subprocess.run([python, "-c", f"import importlib.util as u; "
                        f"raise SystemExit(u.find_spec({module!r}) is None)"],
                       capture_output=True, timeout=60)
    return r.returncode == 0


def first_turn_kernel(b: Bench) -> float:
    k = b.kernel()
    try:
        k.execute("%load_ext plan_widgets", timeout=60)
        since = k.mark()
        cwd = b.fresh_dir("t")
        t0 = time.monotonic()
        k.start(f"%%claude --cwd {cwd} --scripted {TINY}\nHello")
        m = k.wait_message(has_text("Hello from the scripted"), since, 120, "first text")
        return float(m["_t"] - t0)
    finally:
        k.shutdown()


def first_turn_bare(b: Bench) -> float:
    cwd = b.fresh_dir("t")
    r = subprocess.run([sys.executable, "-m", "benchmarks._bare", "first", TINY, str(cwd)],
                       capture_output=True, text=True, timeout=180, cwd=b.work, env=b.env())
    if r.returncode != 0:
        raise RuntimeError(f"bare first turn failed: {r.stderr[-500:]}")
    return float(json.loads(r.stdout.strip().splitlines()[-1])["first_text"])


_USER_CELL = "s = sum(range(30_000_000))"  # a user's own CPU-bound cell, ~0.3 s
_PREFETCH = ("import threading\n"
             "threading.Thread(target=lambda: __import__('claude_agent_sdk'), daemon=True)"
             ".start()")


def user_cell_after_load(b: Bench, prefetch: bool) -> float:
    """A user cell run right after ``%load_ext`` in a fresh kernel; with ``prefetch``, the SDK
    is being imported in a background thread meanwhile (the option we did not take)."""
    k = b.kernel()
    try:
        k.execute("%load_ext plan_widgets" + ("\n" + _PREFETCH if prefetch else ""))
        out = k.execute(_TIMED.format(stmt=_USER_CELL), timeout=120)["text"]
        return float(next(ln for ln in out.splitlines() if ln.startswith("ELAPSED")).split()[1])
    finally:
        k.shutdown()


def fig_load(b: Bench) -> list[Row]:
    pw: list[float] = []
    ipw: list[float] = []
    t_k: list[float] = []
    t_b: list[float] = []
    cell_plain: list[float] = []
    cell_pre: list[float] = []
    anchors: dict[str, list[float]] = {}
    apy = anchors_python()
    anchor_stmts = {}
    missing = []
    if apy:
        for mod, stmt in (("jupyter_ai_magics", "%load_ext jupyter_ai_magics"),
                          ("cc_jupyter", "%load_ext cc_jupyter")):
            if _anchor_has(apy, mod):
                anchor_stmts[stmt] = stmt
            else:
                missing.append(stmt)
        anchor_stmts["import ipywidgets (anchor venv)"] = "import ipywidgets"
    for i in range(b.repeat):
        pw.append(_timed_in_fresh_kernel(b, "%load_ext plan_widgets"))
        ipw.append(_timed_in_fresh_kernel(b, "import ipywidgets"))
        for label, stmt in anchor_stmts.items():
            anchors.setdefault(label, []).append(_timed_in_fresh_kernel(b, stmt, python=apy))
        if i % 2 == 0:
            t_k.append(first_turn_kernel(b))
            t_b.append(first_turn_bare(b))
        else:
            t_b.append(first_turn_bare(b))
            t_k.append(first_turn_kernel(b))
        for pre in (i % 2 == 0, i % 2 != 0):
            (cell_pre if pre else cell_plain).append(user_cell_after_load(b, pre))
        b.log(f"  rep {i + 1}: load_ext {pw[-1] * 1000:.0f} ms, import ipywidgets "
              f"{ipw[-1] * 1000:.0f} ms; first text {t_k[-1]:.2f} s vs bare {t_b[-1]:.2f} s")
    rows = []
    d = [a - c for a, c in zip(pw, ipw, strict=True)]
    r = Row("3", "`%load_ext plan_widgets` in a fresh kernel (in-kernel time)", "ms",
            median(pw) * 1000, median(ipw) * 1000, "`import ipywidgets` in a fresh kernel",
            "<= anchor + 150 ms", samples=[x * 1000 for x in pw],
            anchor_samples=[x * 1000 for x in ipw],
            note=f"difference (median of paired runs): {median(d) * 1000:+.0f} ms")
    r.met = median(d) <= 0.150
    rows.append(r)
    for label, xs in anchors.items():
        rows.append(Row("3", f"anchor: {label}", "ms", median(xs) * 1000,
                        goal="(reported beside it)", samples=[x * 1000 for x in xs],
                        note="separate venv benchmarks/.venv-anchors"))
    for stmt in missing:
        rows.append(Row("3", f"anchor: {stmt}", "ms", None, goal="(reported beside it)",
                        note="not installable here: see the text"))
    if not apy:
        rows.append(Row("3", "anchors `%load_ext jupyter_ai_magics`, `%load_ext cc_jupyter`",
                        "ms", None, note="benchmarks/.venv-anchors missing: run "
                        "`python -m benchmarks --setup-anchors`"))
    r = Row("3", "first turn: start of the first `%%claude` cell of a fresh kernel -> first "
            "streamed text on iopub", "s", median(t_k), median(t_b),
            "bare script: import SDK, start scripted model, connect, query -> first text delta",
            "ratio <= 1.10", samples=t_k, anchor_samples=t_b)
    r.met = r.ratio is not None and r.ratio <= 1.10
    rows.append(r)
    rows.append(Row("3", "experiment: a 0.3 s user cell right after `%load_ext`, with the SDK "
                    "imported in a background thread meanwhile", "ms", median(cell_pre) * 1000,
                    median(cell_plain) * 1000, "the same cell without that thread",
                    "(decides whether to prefetch)", samples=[x * 1000 for x in cell_pre],
                    anchor_samples=[x * 1000 for x in cell_plain]))
    return rows


# -- figure 4: streaming cost ---------------------------------------------------------------------

def _turn_cpu(k: BenchKernel, code: str) -> tuple[float, float, int]:
    """Kernel CPU seconds and wall seconds of one waited turn, and its first message index."""
    since = k.mark()
    c0 = k.cpu_seconds()
    t0 = time.monotonic()
    k.execute(code, timeout=300)
    k.wait_until(lambda: footers(k, since), 60, "turn end")
    return k.cpu_seconds() - c0, time.monotonic() - t0, since


def _sent(m: dict[str, Any]) -> float:
    """When the kernel made the message (header date), else when we received it."""
    d = m["header"].get("date")
    return d.timestamp() if hasattr(d, "timestamp") else float(m["_t"])


def update_rate(comms: list[dict[str, Any]], gap: float = 0.03) -> tuple[float, float]:
    """Widget updates a second while text streams, as the page sees them: comm messages the
    kernel sent together (within ``gap``) are one update. Returns (updates/s, messages/s),
    both over the span from the first to the last update that carried text."""
    texts = [_sent(m) for m in comms if "outputs" in _state(m)]
    if len(texts) < 2:
        return 0.0, 0.0
    lo, hi = min(texts), max(texts)
    times = sorted(t for t in (_sent(m) for m in comms) if lo <= t <= hi)
    starts: list[float] = []
    last = None
    for t in times:
        if last is None or t - last > gap:
            starts.append(t)
        last = t
    span = max(starts[-1] - starts[0], 1e-3)
    return (len(starts) - 1) / span, len(times) / max(hi - lo, 1e-3)


def fig_stream(b: Bench) -> list[Row]:
    k = b.kernel()
    bare = Bare(b)
    cwd = b.fresh_dir("s")
    cpu_k, cpu_b, rate, rate_msgs, nbytes, one_busy, one_idle = [], [], [], [], [], [], []
    cpu_nv: list[float] = []
    cpu_kb: list[float] = []  # the bare SDK's stream inside the benchmark kernel (diagnostic)
    try:
        kernel_setup(k)
        k.start_byte_counter()
        head = f"%%claude --session s --cwd {cwd} --scripted {STREAM}\n"
        k.execute(head + "tiny warm-up", timeout=120)
        bare.call(cmd="stream", script=STREAM, cwd=str(cwd), prompt="tiny warm-up", timeout=300)
        kb_turn = (f"_o = await _KB.turn({STREAM!r}, {str(b.fresh_dir('kb'))!r}, {{p!r}})\n"
                   "assert 'error' not in _o, _o")
        k.execute("import benchmarks._bare as _B\n_KB = _B.Streamer()\n"
                  + kb_turn.format(p="tiny warm-up"), timeout=300)
        for i in range(b.repeat):
            base, _, _ = _turn_cpu(k, "%%claude --session s\ntiny baseline")
            k.count_bytes(True)
            big, wall, since = _turn_cpu(k, "%%claude --session s\nstream the long answer")
            k.count_bytes(False)
            nbytes.append(k.iopub_bytes)
            cpu_k.append((big - base) / DELTAS)
            # the same turn with no view (plan_widgets.Session.ask from code): what the SDK
            # and the session cost in this kernel, without widgets and Markdown
            c0 = k.cpu_seconds()
            k.execute("await plan_widgets.get('s').ask('stream the long answer').wait(300)",
                      timeout=330)
            cpu_nv.append((k.cpu_seconds() - c0 - base) / DELTAS)
            # the bare SDK's same stream in this kernel: what the kernel costs, without us
            c0 = k.cpu_seconds()
            k.execute(kb_turn.format(p="tiny baseline"), timeout=300)
            c1 = k.cpu_seconds()
            k.execute(kb_turn.format(p="stream the long answer"), timeout=330)
            cpu_kb.append((k.cpu_seconds() - c1 - (c1 - c0)) / DELTAS)
            with k._lock:
                comms = [m for m in k.messages[since:]
                         if m["header"]["msg_type"] in ("comm_msg", "comm_open")]
            ups, msgs = update_rate(comms)
            rate.append(ups)
            rate_msgs.append(msgs)
            bb = bare.call(cmd="stream", script=STREAM, cwd=str(cwd), prompt="tiny baseline",
                           timeout=300)
            bg = bare.call(cmd="stream", script=STREAM, cwd=str(cwd),
                           prompt="stream the long answer", timeout=300)
            assert bg["deltas"] >= DELTAS and bg["chars"] == ANSWER_BYTES, bg
            cpu_b.append((bg["cpu"] - bb["cpu"]) / DELTAS)
            b.log(f"  rep {i + 1}: kernel CPU/delta {cpu_k[-1] * 1e6:.1f} us (no view "
                  f"{cpu_nv[-1] * 1e6:.1f} us, bare SDK in the kernel {cpu_kb[-1] * 1e6:.1f} "
                  f"us, bare "
                  f"{cpu_b[-1] * 1e6:.1f} us), {rate[-1]:.1f} updates/s, iopub "
                  f"{nbytes[-1] / 1e3:.0f} kB")
        # responsiveness: `1+1` while a background turn streams, against an idle kernel
        for _ in range(max(1, b.repeat // 2)):
            for _ in range(40):
                t = time.monotonic()
                k.execute("1+1", timeout=30)
                one_idle.append(time.monotonic() - t)
            since = k.mark()
            k.execute("%%claude --session s --background\nstream the long answer", timeout=60)
            while not footers(k, since):
                t = time.monotonic()
                k.execute("1+1", timeout=30)
                one_busy.append(time.monotonic() - t)
        b.log(f"  1+1 while streaming: p95 {p95(one_busy) * 1000:.1f} ms over "
              f"{len(one_busy)} cells (idle p95 {p95(one_idle) * 1000:.1f} ms)")
    finally:
        with contextlib.suppress(Exception):
            k.execute("await _KB.close()", timeout=30)
        bare.close()
        k.shutdown()
    rows = [
        Row("4", "streaming 200 KB in 5,000 deltas: widget updates per second (one cell)",
            "/s", median(rate), goal="<= 10/s", met=median(rate) <= 10, samples=rate,
            note=f"updates = bursts of comm messages sent together; raw comm messages: "
                 f"{median(rate_msgs):.1f}/s"),
        Row("4", "streaming: iopub bytes for the whole turn (raw zmq frames)", "kB",
            median(nbytes) / 1e3, ANSWER_BYTES / 1e3, "the answer's size",
            "<= 5x answer", met=median(nbytes) <= 5 * ANSWER_BYTES,
            samples=[x / 1e3 for x in nbytes]),
        Row("4", "streaming: kernel CPU per delta (turn minus a one-line turn)", "us",
            median(cpu_k) * 1e6, median(cpu_b) * 1e6,
            "bare SDK process CPU per delta, same stream", "ratio <= 1.05",
            met=median(cpu_k) <= 1.05 * median(cpu_b), samples=[x * 1e6 for x in cpu_k],
            anchor_samples=[x * 1e6 for x in cpu_b],
            note=f"the same turn in the same kernel with no view (SDK + session only, "
                 f"`Session.ask` from code): {median(cpu_nv) * 1e6:.0f} µs per delta "
                 f"({median(cpu_nv) / median(cpu_b):.2f}x the bare SDK's); the bare SDK's "
                 f"same stream run inside the benchmark kernel (no plan_widgets): "
                 f"{median(cpu_kb) * 1e6:.0f} µs ({median(cpu_kb) / median(cpu_b):.2f}x); "
                 f"issue 7's goal was 50 µs"),
        Row("4", "`1+1` cell reply latency p95 while a `--background` turn streams", "ms",
            p95(one_busy) * 1000, p95(one_idle) * 1000, "`1+1` p95 on the idle kernel",
            "p95 <= 50 ms", met=p95(one_busy) <= 0.050,
            note=f"{len(one_busy)} cells while streaming, median "
                 f"{median(one_busy) * 1000:.1f} ms"),
    ]
    return rows


# -- figure 5: memory and scale ------------------------------------------------------------------

def fig_memory(b: Bench) -> list[Row]:
    n = 5
    k = b.kernel()
    try:
        kernel_setup(k)
        rss_fresh = k.rss()
        # warm-up session: imports the SDK and ipywidgets once
        cwd = b.fresh_dir("m")
        since = k.mark()
        k.start(f"%%claude --session warm --cwd {cwd} --scripted {PLAN} --plan --mode default\n"
                "Add a greeting script")
        btn = k.wait_until(lambda: new_button(k, "Approve, auto-accept edits", since), 120, "b")
        k.click(btn)
        k.wait_until(lambda: footers(k, since), 120, "warm turn end")
        k.execute("await plan_widgets.get('warm').close()", timeout=60)
        time.sleep(0.5)
        rss0 = k.rss()
        since = k.mark()
        dirs = [b.fresh_dir("m") for _ in range(n)]
        t0 = time.monotonic()
        for i, d in enumerate(dirs):
            k.start(f"%%claude --session m{i} --cwd {d} --scripted {PLAN} --plan --mode default "
                    "--background\nAdd a greeting script")
        clicked: set[str] = set()

        def click_all() -> bool:
            with k._lock:
                ids = [str(m["content"]["comm_id"]) for m in k.messages[since:]
                       if m["header"]["msg_type"] == "comm_open"
                       and _state(m).get("description") == "Approve, auto-accept edits"]
            for cid in ids:
                if cid not in clicked:
                    clicked.add(cid)
                    k.click(cid)
            return len(clicked) >= n

        k.wait_until(click_all, 180, "five plan cards")
        k.wait_until(lambda: len(footers(k, since)) >= n, 180, "five turns to end")
        wall = time.monotonic() - t0
        ok = all((d / "hello.py").exists() for d in dirs)
        time.sleep(0.5)
        rss1 = k.rss()
        kids = k.children_rss()
        status = k.eval("sorted(s.status for s in plan_widgets.sessions().values())")
    finally:
        k.shutdown()
    per = (rss1 - rss0) / n / 2**20
    first = (rss0 - rss_fresh) / 2**20
    cli = kids.get("cli", 0) / max(1, kids.get("cli_count", 1)) / 2**20
    rows = [
        Row("5", f"kernel RSS growth per session ({n} sessions at once, each plan -> approve -> "
            "write)", "MB", per, goal="<= 25 MB", met=per <= 25,
            note=f"first session incl. SDK + ipywidgets imports: {first:.0f} MB; all {n} flows "
                 f"done in {wall:.1f} s, all wrote hello.py: {ok}; statuses {status}"),
        Row("5", "CLI process RSS, each (reported on its own)", "MB", cli,
            note=f"{kids.get('cli_count', 0)} CLI processes; scripted model servers "
                 f"{kids.get('scripted', 0) / max(1, kids.get('scripted_count', 1)) / 2**20:.0f}"
                 " MB each"),
    ]
    return rows


def fig_fold(b: Bench) -> list[Row]:
    from plan_widgets import model as ev
    from plan_widgets.store import EventLog, read_events

    path = b.work / "fold.jsonl"
    log = EventLog(path)
    log.append(ev.SessionStarted(session_id="bench", name="default", cwd=str(b.work),
                                 resting_mode="default"))
    log.append(ev.PlanMode(mode="default", state="effective", source="start"))
    for t in range(1, 2001):
        log.append(ev.TurnStarted(turn=t, prompt=f"turn {t}: do the next thing", plan=t % 2 == 0))
        if t % 2 == 0:
            d = f"p{t:05d}"
            log.append(ev.PlanMode(mode="plan", state="requested", source="user"))
            log.append(ev.PlanMode(mode="plan", state="effective", source="user"))
            log.append(ev.PlanProposed(decision_id=d, plan="# Plan\n\n1. step one\n2. step two"))
            log.append(ev.PlanDecided(decision_id=d, outcome="approved", mode_after="default",
                                      by="user"))
            log.append(ev.PlanMode(mode="default", state="effective", source="approval"))
        else:
            d = f"t{t:05d}"
            log.append(ev.ToolRequested(decision_id=d, tool="Write",
                                        input={"file_path": f"/tmp/f{t}.py", "content": "x"}))
            log.append(ev.ToolDecided(decision_id=d, outcome="allowed", by="user"))
        log.append(ev.TurnEnded(turn=t, result="success", cost_usd=0.001 * t, input_tokens=100,
                                output_tokens=50, duration_ms=1200))
    log.close()
    n_events = len(read_events(path))
    both, fold_only = [], []
    for _ in range(max(5, b.repeat)):
        t0 = time.perf_counter()
        events = read_events(path)
        t1 = time.perf_counter()
        state = ev.fold(events)
        t2 = time.perf_counter()
        both.append(t2 - t0)
        fold_only.append(t2 - t1)
    assert state.turns == 2000, state.turns
    return [Row("5", f"a 2,000-turn event log ({n_events:,} events, "
                f"{path.stat().st_size / 1e6:.1f} MB) read and folded", "ms",
                median(both) * 1000, goal="<= 200 ms", met=median(both) <= 0.2,
                samples=[x * 1000 for x in both],
                note=f"fold alone {median(fold_only) * 1000:.0f} ms")]


# -- figure 6: the kernel tools (issue 14) ------------------------------------------------------

_TOOLS_SETUP = """
import time as _t, json as _j
import numpy as _np, pandas as _pd
from plan_widgets.ipython.kernel import tools as _kt
_tools = {_s.name: _s.handler for _s in _kt.host_tools('bench').tools}
async def _timed(_name, _args, _n):
    _out = []
    for _ in range(_n):
        _a = _t.perf_counter()
        _text = await _tools[_name](_args)
        _out.append(_t.perf_counter() - _a)
    return _out, len(_text), _text[:80]
"""
# 1,000 variables of the kinds a notebook holds: numbers, strings, lists, dicts, small
# DataFrames and arrays, functions and modules the listing leaves out
_THOUSAND = """
for _i in range(1000):
    _k = _i % 8
    globals()[f"v{_i}"] = (_i if _k == 0 else f"text {_i} " * 20 if _k == 1 else
        list(range(100)) if _k == 2 else {"a": _i, "b": [1, 2, 3]} if _k == 3 else
        _pd.DataFrame({"x": range(10), "y": 1.5}) if _k == 4 else _np.zeros((10, 10)) if _k == 5
        else 3.25 if _k == 6 else (lambda: None))
"""
_TEN_MILLION = """
_n = 10_000_000
df = _pd.DataFrame({"price": _np.random.rand(_n), "qty": _np.random.randint(0, 100, _n),
                    "discount": _np.where(_np.random.rand(_n) > 0.9, _np.nan, 0.1),
                    "region": _pd.Categorical(_np.random.choice(["n", "s", "e", "w"], _n))})
"""


def _tool_loop_script(folder: Path, calls: int) -> Path:
    """A scripted model that calls the kernel tools ``calls`` times in one turn."""
    import yaml

    cycle = [("mcp__kernel__list_variables", {"limit": 1000}),
             ("mcp__kernel__inspect_variable", {"name": "df"}),
             ("mcp__kernel__read_history", {"last": 20}),
             ("mcp__kernel__run_code", {"code": "total = sum(range(100_000))\ntotal"})]
    steps: list[dict[str, Any]] = [{"when": {"user": "(?i)exercise the kernel tools"},
                                    "reply": [{"tool": cycle[0][0], "input": cycle[0][1]}]}]
    for i in range(1, calls):
        name, args = cycle[i % len(cycle)]
        steps.append({"when": {"tool_result": "."}, "reply": [{"tool": name, "input": args}]})
    steps.append({"when": {"tool_result": "."}, "reply": [{"text": "Tools exercised."}]})
    steps.append({"repeat": True, "reply": [{"text": "ok"}]})
    path = folder / "tool_loop.yaml"
    path.write_text(yaml.safe_dump({"steps": steps}), encoding="utf-8")
    return path


def fig_tools(b: Bench) -> list[Row]:
    # bypassPermissions: the code the loop runs needs no card (as root, only in a sandbox)
    k = b.kernel(env={"IS_SANDBOX": "1"})
    n = max(10, 4 * b.repeat)
    one_busy: list[float] = []
    one_idle: list[float] = []
    try:
        kernel_setup(k)
        k.execute(_TOOLS_SETUP + _THOUSAND, timeout=120)
        out = json.loads(k.execute(
            f"print(_j.dumps(await _timed('list_variables', {{'limit': 1000}}, {n})))",
            timeout=120)["text"])
        listing, list_chars, list_head = out
        k.execute(_TEN_MILLION, timeout=300)
        out = json.loads(k.execute(
            f"print(_j.dumps(await _timed('inspect_variable', {{'name': 'df'}}, {n})))",
            timeout=300)["text"])
        inspect, inspect_chars, inspect_head = out
        assert "shape: 10,000,000 rows" in k.execute(
            "print((await _tools['inspect_variable']({'name': 'df'}))[:200])")["text"]
        b.log(f"  list 1,000 variables: median {median(listing) * 1000:.1f} ms "
              f"({list_chars:,} chars); inspect 10M rows: median "
              f"{median(inspect) * 1000:.1f} ms ({inspect_chars:,} chars)")
        cwd = b.fresh_dir("tools")
        script = _tool_loop_script(cwd, 40)
        for _ in range(40):
            t = time.monotonic()
            k.execute("1+1", timeout=30)
            one_idle.append(time.monotonic() - t)
        for rep in range(max(1, b.repeat // 2)):
            since = k.mark()
            head = (f"%%claude --session t --cwd {cwd} --scripted {script} "
                    "--mode bypassPermissions --background" if rep == 0 else
                    "%%claude --session t --new --background")
            k.execute(f"{head}\nexercise the kernel tools", timeout=120)
            while not footers(k, since):
                t = time.monotonic()
                k.execute("1+1", timeout=30)
                one_busy.append(time.monotonic() - t)
            end = footers(k, since)[0]
            assert "✓" in _state(end)["value"], f"the tool turn failed: {_state(end)['value']}"
        b.log(f"  1+1 while the tools run: p95 {p95(one_busy) * 1000:.1f} ms over "
              f"{len(one_busy)} cells (idle p95 {p95(one_idle) * 1000:.1f} ms)")
    finally:
        k.shutdown()
    ms = [x * 1000 for x in listing]
    mi = [x * 1000 for x in inspect]
    return [
        Row("6", "kernel tools: list 1,000 variables (the tool's handler, in the kernel)", "ms",
            median(ms), goal="p95 <= 20 ms", met=p95(ms) <= 20, samples=ms,
            note=f"p95 {p95(ms):.1f} ms, max {max(ms):.1f} ms over {len(ms)} calls; "
                 f"{list_chars:,} characters returned (limit=1000; the rows stop at the 20 KB "
                 "output bound)"),
        Row("6", "kernel tools: inspect a 10-million-row DataFrame (4 columns)", "ms",
            median(mi), goal="p95 <= 100 ms", met=p95(mi) <= 100, samples=mi,
            note=f"p95 {p95(mi):.1f} ms, max {max(mi):.1f} ms over {len(mi)} calls; shape, "
                 "dtypes, head, null counts, in a thread under the time budget; describe() "
                 "left out above 500,000 cells"),
        Row("6", "`1+1` cell reply latency p95 while a `--background` turn calls the kernel "
            "tools (list, inspect 10M rows, history, run code; 40 calls)", "ms",
            p95(one_busy) * 1000, p95(one_idle) * 1000, "`1+1` p95 on the idle kernel",
            "p95 <= 50 ms", met=p95(one_busy) <= 0.050,
            samples=[x * 1000 for x in one_busy],
            note=f"{len(one_busy)} cells while the tools ran, median "
                 f"{median(one_busy) * 1000:.1f} ms"),
    ]


FIGURES: dict[str, Callable[[Bench], list[Row]]] = {
    "flow": fig_flow,
    "load": fig_load,
    "stream": fig_stream,
    "memory": fig_memory,
    "fold": fig_fold,
    "tools": fig_tools,
}
