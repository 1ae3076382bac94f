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


def fig_soak(b: Bench) -> list[Row]:
    import nbformat

    n = QUICK_TURNS if b.quick else TURNS
    k = b.kernel()
    bare = Bare(b)
    cwd, bare_cwd = b.fresh_dir("soak"), b.fresh_dir("soakb")
    for d in (cwd, bare_cwd):
        (d / "notes.txt").write_text(NOTES, encoding="utf-8")
    cells: list[tuple[str, str]] = []
    wall: list[float] = []
    cpu: list[float] = []
    bare_wall: list[float] = []
    bare_cpu: list[float] = []
    samples: list[tuple[int, int, int, int]] = []  # (turn, registry, iopub live, rss)
    bare_proc = psutil.Process(bare.pid())
    try:
        kernel_setup(k)
        # imports paid before the first turn (the memory figure reports them): what grows
        # from here on is the session's and its turns'
        k.execute("import claude_agent_sdk, ipywidgets, plan_widgets.widgets, "
                  "plan_widgets.agent.sdk", timeout=120)
        reg0, rss0 = _kernel_sample(k)
        samples.append((0, reg0, iopub_live(k), rss0))
        bare_rss0 = bare_proc.memory_info().rss
        head = f"%%claude --session soak --cwd {cwd} --scripted {SOAK} --mode acceptEdits\n"
        for i in range(1, n + 1):
            p = prompt(i)
            src = (head if i == 1 else "%%claude --session soak\n") + p
            for who in (("k", "b") if i % 2 else ("b", "k")):
                if who == "k":
                    c0 = k.cpu_seconds()
                    msg_id, dt = run_cell(k, src, timeout=180)
                    cpu.append(k.cpu_seconds() - c0)
                    wall.append(dt)
                    cells.append((src, msg_id))
                else:
                    out = bare.call(cmd="stream", script=SOAK, cwd=str(bare_cwd), prompt=p,
                                    mode="acceptEdits", timeout=180)
                    if ("milk" if p.startswith("read") else "**ok**") not in out["text"]:
                        raise RuntimeError(f"bare turn {i} answered {out['text']!r}")
                    bare_wall.append(out["wall"])
                    bare_cpu.append(out["cpu"])
            if i == 1 or i % SAMPLE_EVERY == 0 or i == n:
                reg, rss = _kernel_sample(k)
                samples.append((i, reg, iopub_live(k), rss))
            if i % 25 == 0:
                b.log(f"  turn {i}: {wall[-1] * 1000:.0f} ms (bare {bare_wall[-1] * 1000:.0f} "
                      f"ms); live models {samples[-1][1]} (iopub {samples[-1][2]}); kernel RSS "
                      f"{(samples[-1][3] - rss0) / 2**20:+.1f} MB")
        status = k.execute("print(await plan_widgets.get('soak').wait(30))",
                           timeout=60)["text"].strip()
        bare_rss1 = bare_proc.memory_info().rss
        reg, rss1 = _kernel_sample(k)
        live = iopub_live(k)
        names = json.loads(k.execute(
            "import collections as _c, json as _j\nprint(_j.dumps(_c.Counter("
            "x._model_name for x in _w.widgets.widget._instances.values())))")["text"])
        state_bytes = len(k.execute(
            "print(_j.dumps(_w.Widget.get_manager_state(drop_defaults=True)))",
            timeout=60)["text"])
    finally:
        bare.close()
        k.shutdown()

    nb = frontend_notebook(k, cells)
    saved = nbformat.writes(nb).encode()
    anchor = nbformat.writes(static_notebook(nb)).encode()
    all_static = nbformat.writes(static_notebook(nb, turns_only=False)).encode()
    bar_lines = [json.dumps(o.data) for c in nb.cells for o in c.outputs
                 if "pw-control-line" in (o.get("data") or {}).get("text/markdown", "")]
    turn_outs = [o for c in nb.cells for o in c.outputs
                 if 'class="pw-turn' in (o.get("data") or {}).get("text/markdown", "")]
    static = sum(WIDGET_VIEW not in o.data and "pw-static" in o.data["text/markdown"]
                 and "✓" in o.data["text/markdown"] for o in turn_outs)
    views = sum(WIDGET_VIEW in (o.get("data") or {}) for c in nb.cells for o in c.outputs)

    def ms(xs: list[float]) -> float:
        return float(median(xs) or 0.0) * 1000

    early, late = slice(1, 1 + WINDOW), slice(n - WINDOW, n)
    lo, hi = f"2-{1 + WINDOW}", f"{n - WINDOW + 1}-{n}"
    by_turn = "; ".join(f"{t}: {r} ({lv})" for t, r, lv, _rss in samples)
    rss_at = {t: rss for t, _r, _lv, rss in samples}
    mb = 2**20
    names_s = ", ".join(f"{v} {k_}" for k_, v in sorted(names.items(), key=lambda x: -x[1]))
    rows = [
        Row("6", f"soak, {n} `%%claude` turns in one kernel: live widget models after the last "
            "turn (the kernel's ipywidgets registry)", "n", float(reg),
            goal="<= 30", met=reg <= 30,
            note=f"on iopub, `comm_open` minus `comm_close`: {live}; registry (iopub) after "
                 f"turn {by_turn}; now: {names_s}; session {status}"),
        Row("6", f"soak: kernel RSS growth over the {n} turns", "MB", (rss1 - rss0) / mb,
            goal="<= 5 MB", met=(rss1 - rss0) / mb <= 5,
            note=f"from {rss0 / mb:.0f} MB before turn 1 (SDK, ipywidgets imported) to "
                 f"{rss1 / mb:.0f} MB; after turn 1 {(rss_at[1] - rss0) / mb:+.1f} MB, turn "
                 f"{SAMPLE_EVERY} -> {n}: {(rss1 - rss_at[SAMPLE_EVERY]) / mb:+.1f} MB; "
                 f"RSS after `gc.collect()`; the bare SDK process over the same turns: "
                 f"{(bare_rss1 - bare_rss0) / mb:+.1f} MB"),
    ]
    r = Row("6", f"soak: time of a turn, turns {hi} (cell sent -> `idle` on iopub)", "ms",
            ms(wall[late]), ms(wall[early]), f"turns {lo} of the same session",
            "ratio <= 1.1", samples=[x * 1000 for x in wall[late]],
            anchor_samples=[x * 1000 for x in wall[early]],
            note=f"kernel CPU per turn {ms(cpu[early]):.0f} ms (turns {lo}) vs "
                 f"{ms(cpu[late]):.0f} ms ({hi}); the bare SDK, same prompts on one client: "
                 f"{ms(bare_wall[early]):.0f} vs {ms(bare_wall[late]):.0f} ms "
                 f"({ms(bare_wall[late]) / max(ms(bare_wall[early]), 1e-9):.2f}x), its CPU "
                 f"{ms(bare_cpu[early]):.0f} vs {ms(bare_cpu[late]):.0f} ms; turn 1 (session "
                 f"start) {wall[0]:.2f} s; every fifth turn reads a file (a tool call)")
    r.met = r.ratio is not None and r.ratio <= 1.1
    rows.append(r)
    r = Row("6", f"soak: saved `.ipynb` after the {n} turns (as a frontend saves it, no widget "
            "state)", "kB", len(saved) / 1e3, len(anchor) / 1e3,
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
                 f"+{state_bytes / 1e3:.0f} kB")
    r.met = r.ratio is not None and r.ratio <= 1.5 and static == n
    rows.append(r)
    return rows
