"""The soak run of issue 15: 100 ``%%claude`` turns in one real kernel.

One session answers 100 prompts from ``scripts/soak.yaml`` (a short Markdown answer each; every
fifth prompt reads ``notes.txt`` first: a tool call, two model calls). Beside each kernel turn,
the bare SDK process answers the same prompt on one client of its own (the order flips every
turn), so the anchor sees the same machine at the same moment. Measured:

- live widget models after the last turn: the kernel's ipywidgets registry, and ``comm_open``
  minus ``comm_close`` counted on iopub (both, and every ten turns);
- the kernel's RSS growth over the turns (psutil, after ``gc.collect()`` in the kernel);
- the time of the late turns against the early ones (medians of turns 2-11 and of the last
  ten), from sending the cell to its ``idle`` status on iopub;
- the notebook a frontend would save (every ``update_display_data`` applied to its display,
  no widget state: JupyterLab's default), written with nbformat, against a notebook of the
  same cells holding only each turn's static output (its ``text/markdown`` and
  ``text/plain``, no widget view or state).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from ._figures import SCRIPTS, Bare, Bench, Row, kernel_setup, median
from ._kernel import BenchKernel

SOAK = str(SCRIPTS / "soak.yaml")
TURNS = 100
QUICK_TURNS = 30
WINDOW = 10  # turns per timing window: 2..11 against the last ten
SAMPLE_EVERY = 10
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NOTES = "remember the milk\n"


def prompt(i: int) -> str:
    """The i-th prompt (1-based): every fifth one reads the notes (a tool call)."""
    return f"read the notes (turn {i})" if i % 5 == 0 else f"prompt {i}"


def run_cell(k: BenchKernel, code: str, timeout: float = 120) -> tuple[str, float]:
    """Run a cell; returns its msg_id and the seconds from sending it to its ``idle`` status
    on iopub (only the new messages are scanned: the list grows long in a soak)."""
    since = k.mark()
    t0 = time.monotonic()
    msg_id = k.start(code)
    scanned = [since]

    def idle() -> dict[str, Any] | None:
        msgs = k.messages
        for i in range(scanned[0], len(msgs)):
            m = msgs[i]
            if (m["parent_header"].get("msg_id") == msg_id
                    and m["header"]["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle"):
                return m
        scanned[0] = len(msgs)
        return None

    end = k.wait_until(idle, timeout, f"cell {code[:50]!r}")
    reply = k.kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = k.kc.get_shell_msg(timeout=timeout)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"cell failed: {code[:60]!r}: {reply['content'].get('evalue')}")
    return msg_id, float(end["_t"] - t0)


def _kernel_sample(k: BenchKernel) -> tuple[int, int]:
    """(live widget models in the kernel's registry, kernel RSS) after a garbage collection."""
    out = k.execute("import gc as _gc, ipywidgets as _w\n_gc.collect()\n"
                    "print(len(_w.widgets.widget._instances))", timeout=60)
    return int(out["text"].split()[-1]), k.rss()


def iopub_live(k: BenchKernel) -> int:
    """Widget models opened on iopub and not closed since (what the page holds)."""
    opened: set[str] = set()
    closed: set[str] = set()
    with k._lock:
        for m in k.messages:
            t, c = m["header"]["msg_type"], m["content"]
            if t == "comm_open" and c.get("target_name") == "jupyter.widget":
                opened.add(c["comm_id"])
            elif t == "comm_close":
                closed.add(c["comm_id"])
    return len(opened - closed)


def frontend_notebook(k: BenchKernel, cells: list[tuple[str, str]]) -> Any:
    """The notebook a frontend would save after these cells (source, msg_id): each cell's
    outputs in order, every ``update_display_data`` applied to its display wherever it is, no
    widget state in the metadata (JupyterLab saves none by default)."""
    import nbformat

    by_id: dict[str, list[dict[str, Any]]] = {msg_id: [] for _src, msg_id in cells}
    with k._lock:
        messages = list(k.messages)
    for m in messages:
        t, content = m["header"]["msg_type"], m["content"]
        outs = by_id.get(m["parent_header"].get("msg_id"))
        display_id = (content.get("transient") or {}).get("display_id")
        if t == "update_display_data":
            for cell_outs in by_id.values():
                for o in cell_outs:
                    if display_id and o.get("_display_id") == display_id:
                        o["data"], o["metadata"] = content["data"], content.get("metadata", {})
        elif outs is None:
            continue
        elif t == "display_data":
            outs.append({"output_type": "display_data", "data": content["data"],
                         "metadata": content.get("metadata", {}), "_display_id": display_id})
        elif t == "stream":
            outs.append({"output_type": "stream", "name": content["name"],
                         "text": content["text"]})
        elif t == "error":
            outs.append({"output_type": "error", "ename": content["ename"],
                         "evalue": content["evalue"], "traceback": content["traceback"]})
    nb = nbformat.v4.new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    for n, (src, msg_id) in enumerate(cells, 1):
        cell = nbformat.v4.new_code_cell(src, execution_count=n)
        for o in by_id[msg_id]:
            kind = o.pop("output_type")
            o.pop("_display_id", None)
            cell.outputs.append(nbformat.v4.new_output(kind, **o))
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def static_notebook(nb: Any, turns_only: bool = True) -> Any:
    """The same cells with only each turn's static output: its Markdown and plain text (no
    control bar, no widget view or state). ``turns_only=False``: every display's Markdown and
    plain text (the control bar's line too), still no widget view."""
    import copy

    out = copy.deepcopy(nb)
    for cell in out.cells:
        keep = []
        for o in cell.outputs:
            md = (o.get("data") or {}).get("text/markdown", "")
            if o.output_type == "display_data" and (not turns_only or 'class="pw-turn' in md):
                o.data = {k: v for k, v in o.data.items() if k in ("text/markdown", "text/plain")}
                o.metadata = {}
                keep.append(o)
        cell.outputs = keep
    return out


@dataclass
class Soak:
    """What one soak run collected."""

    n: int
    cells: list[tuple[str, str]] = field(default_factory=list)  # (source, msg_id)
    wall: list[float] = field(default_factory=list)  # seconds per kernel turn
    cpu: list[float] = field(default_factory=list)  # kernel CPU seconds per turn
    bare_wall: list[float] = field(default_factory=list)
    bare_cpu: list[float] = field(default_factory=list)
    samples: list[tuple[int, int, int, int]] = field(default_factory=list)
    """(after turn, models in the registry, models live on iopub, kernel RSS)."""
    bare_rss: list[int] = field(default_factory=list)  # before the first turn, after the last
    status: str = ""
    names: dict[str, int] = field(default_factory=dict)  # live models by name, at the end
    state_bytes: int = 0  # the live models' widget state as JSON


def _bare_turn(bare: Bare, s: Soak, cwd: Path, p: str) -> None:
    out = bare.call(cmd="stream", script=SOAK, cwd=str(cwd), prompt=p, mode="acceptEdits",
                    timeout=180)
    if ("milk" if p.startswith("read") else "**ok**") not in out["text"]:
        raise RuntimeError(f"the bare SDK answered {p!r} with {out['text']!r}")
    s.bare_wall.append(out["wall"])
    s.bare_cpu.append(out["cpu"])


def _kernel_turn(k: BenchKernel, s: Soak, src: str) -> None:
    c0 = k.cpu_seconds()
    msg_id, dt = run_cell(k, src, timeout=180)
    s.cpu.append(k.cpu_seconds() - c0)
    s.wall.append(dt)
    s.cells.append((src, msg_id))


def _sample(k: BenchKernel, s: Soak, turn: int) -> None:
    reg, rss = _kernel_sample(k)
    s.samples.append((turn, reg, iopub_live(k), rss))


def run_soak(b: Bench, k: BenchKernel, bare: Bare, n: int) -> Soak:
    """``n`` turns in the kernel, each beside the same prompt on the bare SDK."""
    s = Soak(n)
    cwd, bare_cwd = b.fresh_dir("soak"), b.fresh_dir("soakb")
    for d in (cwd, bare_cwd):
        (d / "notes.txt").write_text(NOTES, encoding="utf-8")
    bare_proc = psutil.Process(bare.pid())
    kernel_setup(k)
    # imports paid before the first turn (the memory figure reports them): what grows from
    # here on is the session's and its turns'. The Markdown parser (comrak, a 2.3 MB Rust
    # extension, about 1.9 MB of RSS) is loaded by the first render: load it here too.
    k.execute("import claude_agent_sdk, ipywidgets, plan_widgets.widgets, "
              "plan_widgets.agent.sdk, plan_widgets.render.engine as _engine\n"
              "_engine.renderer()", timeout=120)
    _sample(k, s, 0)
    s.bare_rss.append(bare_proc.memory_info().rss)
    head = f"%%claude --session soak --cwd {cwd} --scripted {SOAK} --mode acceptEdits\n"
    for i in range(1, n + 1):
        p = prompt(i)
        src = (head if i == 1 else "%%claude --session soak\n") + p
        if i % 2:
            _kernel_turn(k, s, src)
            _bare_turn(bare, s, bare_cwd, p)
        else:
            _bare_turn(bare, s, bare_cwd, p)
            _kernel_turn(k, s, src)
        if i == 1 or i % SAMPLE_EVERY == 0 or i == n:
            _sample(k, s, i)
        if i % 25 == 0:
            _t, reg, live, rss = s.samples[-1]
            b.log(f"  turn {i}: {s.wall[-1] * 1000:.0f} ms (bare {s.bare_wall[-1] * 1000:.0f} "
                  f"ms); live models {reg} (iopub {live}); kernel RSS "
                  f"{(rss - s.samples[0][3]) / 2**20:+.1f} MB")
    s.status = k.execute("print(await plan_widgets.get('soak').wait(30))",
                         timeout=60)["text"].strip()
    s.bare_rss.append(bare_proc.memory_info().rss)
    _sample(k, s, n)  # once the session is idle
    s.names = json.loads(k.execute(
        "import collections as _c, json as _j\nprint(_j.dumps(_c.Counter("
        "x._model_name for x in _w.widgets.widget._instances.values())))")["text"])
    s.state_bytes = len(k.execute(
        "print(_j.dumps(_w.Widget.get_manager_state(drop_defaults=True)))", timeout=60)["text"])
    return s


def fig_soak(b: Bench) -> list[Row]:
    k = b.kernel()
    bare = Bare(b)
    try:
        s = run_soak(b, k, bare, QUICK_TURNS if b.quick else TURNS)
    finally:
        bare.close()
        k.shutdown()
    return [*_model_rows(s), _time_row(s), _notebook_row(k, s)]


def _ms(xs: list[float]) -> float:
    return median(xs) * 1000


def _model_rows(s: Soak) -> list[Row]:
    mb = 2**20
    _t, reg, live, rss1 = s.samples[-1]
    rss0 = s.samples[0][3]
    rss_at = {t: rss for t, _r, _lv, rss in s.samples}
    by_turn = "; ".join(f"{t}: {r} ({lv})" for t, r, lv, _rss in s.samples[:-1])
    names = ", ".join(f"{v} {k_}" for k_, v in sorted(s.names.items(), key=lambda x: -x[1]))
    growth = (rss1 - rss0) / mb
    return [
        Row("6", f"soak, {s.n} `%%claude` turns in one kernel: live widget models after the "
            "last turn (the kernel's ipywidgets registry)", "n", float(reg),
            goal="<= 30", met=reg <= 30,
            note=f"on iopub, `comm_open` minus `comm_close`: {live}; registry (iopub) after "
                 f"turn {by_turn}; now: {names}; session {s.status}"),
        Row("6", f"soak: kernel RSS growth over the {s.n} turns", "MB", growth,
            goal="<= 5 MB", met=growth <= 5,
            note=f"from {rss0 / mb:.0f} MB before turn 1 (SDK, ipywidgets, Markdown parser "
                 f"loaded) to "
                 f"{rss1 / mb:.0f} MB; after turn 1 {(rss_at[1] - rss0) / mb:+.1f} MB, turn "
                 f"{SAMPLE_EVERY} -> {s.n}: {(rss1 - rss_at[SAMPLE_EVERY]) / mb:+.1f} MB; "
                 f"RSS after `gc.collect()`; the bare SDK process over the same turns: "
                 f"{(s.bare_rss[1] - s.bare_rss[0]) / mb:+.1f} MB"),
    ]


def _time_row(s: Soak) -> Row:
    early, late = slice(1, 1 + WINDOW), slice(s.n - WINDOW, s.n)
    lo, hi = f"2-{1 + WINDOW}", f"{s.n - WINDOW + 1}-{s.n}"
    bare_e, bare_l = _ms(s.bare_wall[early]), _ms(s.bare_wall[late])
    r = Row("6", f"soak: time of a turn, turns {hi} (cell sent -> `idle` on iopub)", "ms",
            _ms(s.wall[late]), _ms(s.wall[early]), f"turns {lo} of the same session",
            "ratio <= 1.1", samples=[x * 1000 for x in s.wall[late]],
            anchor_samples=[x * 1000 for x in s.wall[early]],
            note=f"kernel CPU per turn {_ms(s.cpu[early]):.0f} ms (turns {lo}) vs "
                 f"{_ms(s.cpu[late]):.0f} ms ({hi}); the bare SDK, same prompts on one client: "
                 f"{bare_e:.0f} vs {bare_l:.0f} ms ({bare_l / bare_e:.2f}x), its CPU "
                 f"{_ms(s.bare_cpu[early]):.0f} vs {_ms(s.bare_cpu[late]):.0f} ms; turn 1 "
                 f"(session start) {s.wall[0]:.2f} s; every fifth turn reads a file (a tool "
                 "call)")
    r.met = r.ratio is not None and r.ratio <= 1.1
    return r


def _notebook_row(k: BenchKernel, s: Soak) -> Row:
    import nbformat

    nb = frontend_notebook(k, s.cells)
    saved = nbformat.writes(nb).encode()
    anchor = nbformat.writes(static_notebook(nb)).encode()
    all_static = nbformat.writes(static_notebook(nb, turns_only=False)).encode()
    outs = [o for c in nb.cells for o in c.outputs]
    bar_lines = [json.dumps(o.data) for o in outs
                 if "pw-control-line" in (o.get("data") or {}).get("text/markdown", "")]
    turn_outs = [o for o in outs
                 if 'class="pw-turn' in (o.get("data") or {}).get("text/markdown", "")]
    static = sum(WIDGET_VIEW not in o.data and "pw-static" in o.data["text/markdown"]
                 and "✓" in o.data["text/markdown"] for o in turn_outs)
    views = sum(WIDGET_VIEW in (o.get("data") or {}) for o in outs)
    r = Row("6", f"soak: saved `.ipynb` after the {s.n} turns (as a frontend saves it, no "
            "widget state)", "kB", len(saved) / 1e3, len(anchor) / 1e3,
            "the same cells holding only each turn's static output (`text/markdown` + "
            "`text/plain`)", "ratio <= 1.5",
            note=f"{static} of {len(turn_outs)} turns static and complete (footer ✓); "
                 f"{views} widget view(s) left in the notebook (the newest cell's control "
                 f"bar); each cell's control-bar line (Markdown + text): "
                 f"{median([len(x) for x in bar_lines]):.0f} bytes, "
                 f"{sum(map(len, bar_lines)) / 1e3:.0f} kB in all; against the cells' whole "
                 f"static output (bar lines too, no widget view, {len(all_static) / 1e3:.0f} "
                 f"kB): {len(saved) / len(all_static):.2f}x; with widget state saved too "
                 f"(JupyterLab's *Save Widget State Automatically*): "
                 f"+{s.state_bytes / 1e3:.0f} kB")
    r.met = r.ratio is not None and r.ratio <= 1.5 and static == s.n
    return r
