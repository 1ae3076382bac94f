"""Figures 8 and 9 (issue 23): many sessions, and a first turn faster than a bare script.

8. Memory per live session, kernel side and CLI side: 1, 5 and 10 sessions in one kernel
   (the growth per session between 1 and 5, and between 5 and 10: linear if they agree
   within half the larger one), in ``--repeat`` fresh kernels (medians); then the same
   sessions asleep (their CLIs closed: what a sleeping session still costs); 10 kernels with
   one session each; a turn's latency with 10 sessions answering at once, as a ratio to one
   session alone. ``--quick``: 4 sessions (1, 2, 4), a harness check.
9. The first turn with the CLI pre-started at ``%load_ext`` (3 s pause before the cell, as a
   user who loads the extension and then types a prompt), against a bare ``claude-agent-sdk``
   script started at the moment the cell runs. Goal: <= 0.6x.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ._figures import TINY, Bench, Row, first_turn_bare, footers, has_text, median
from ._kernel import BenchKernel

N = 10


def _turn(k: BenchKernel, name: str, cwd: Path) -> None:
    since = k.mark()
    k.start(f"%%claude --session {name} --cwd {cwd} --scripted {TINY}\nHello")
    k.wait_until(lambda: footers(k, since), 120, f"{name}'s turn")


def _sides(k: BenchKernel) -> tuple[int, int, int]:
    """Kernel RSS, the CLIs' RSS summed, and how many CLIs."""
    kids = k.children_rss()
    return k.rss(), kids.get("cli", 0), kids.get("cli_count", 0)


def _concurrent(k: BenchKernel, names: list[str]) -> list[float]:
    """One turn in each session, all sent at once: each turn's latency to its footer."""
    since = k.mark()
    t0 = time.monotonic()
    for name in names:
        k.start(f"%%claude --session {name} --background\nHello")
    done = k.wait_until(lambda: len(footers(k, since)) >= len(names) and footers(k, since),
                        180, "the concurrent turns")
    return [float(m["_t"] - t0) for m in done[:len(names)]]


def _points(n: int) -> tuple[int, int, int]:
    return 1, n // 2, n


_ASLEEP = ("import plan_widgets.ipython.registry as _r\n"
           "_slept = [s.sleep('idle') for s in _r.sessions().values()]\nprint(sum(_slept))")


def one_kernel(b: Bench, n: int, latency: bool) -> dict[str, Any]:
    k = b.kernel()
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        _turn(k, "warm", b.fresh_dir("w"))  # the SDK and ipywidgets, imported once
        k.execute("await plan_widgets.get('warm').close()", timeout=60)
        time.sleep(0.5)
        at: dict[int, tuple[int, int, int]] = {0: _sides(k)}
        for i in range(n):
            _turn(k, f"s{i}", b.fresh_dir("s"))
            if i + 1 in _points(n):
                time.sleep(0.5)
                at[i + 1] = _sides(k)
        alone: list[float] = []
        together: list[float] = []
        if latency:
            for _ in range(b.repeat):
                alone += _concurrent(k, ["s0"])
            for _ in range(max(1, b.repeat // 2)):
                together += _concurrent(k, [f"s{i}" for i in range(n)])
        # every session asleep: its CLI closed, what it holds in the kernel stays
        slept = int(k.execute(_ASLEEP, timeout=60)["text"].strip() or 0)
        k.wait_until(lambda: k.children_rss().get("cli_count", 0) == 0, 60, "the CLIs to exit")
        time.sleep(0.5)
        return {"at": at, "alone": alone, "together": together, "asleep": _sides(k),
                "slept": slept}
    finally:
        k.shutdown()


def many_kernels(b: Bench, n: int = N) -> list[tuple[int, int, int]]:
    kernels: list[BenchKernel] = []
    try:
        for _ in range(n):
            k = b.kernel()
            kernels.append(k)
            k.execute("%load_ext plan_widgets\nimport plan_widgets")
            _turn(k, "default", b.fresh_dir("k"))
        time.sleep(0.5)
        return [_sides(k) for k in kernels]
    finally:
        for k in kernels:
            k.shutdown()


def first_turn_prestarted(b: Bench, unused_timeout: float | None = None) -> dict[str, float]:
    """A fresh kernel whose config names the scripted model (as a user's credentials would
    be found), ``%load_ext``, 3 s, then a cell with a prompt: the time to its first text, and
    what the pre-start holds (the kernel's RSS growth from before ``%load_ext`` to the end of
    the pause, the CLI's RSS). ``unused_timeout``: the pre-started CLI closes unused after so
    many seconds, and the cell comes once it has (what the first cell pays then)."""
    d = b.fresh_dir("p")
    profile = d / ".home" / ".ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(f"c.ClaudeMagics.scripted = {TINY!r}\n")
    k = BenchKernel(d)
    try:
        if unused_timeout is not None:
            k.execute("import plan_widgets.ipython.prestart as _p\n"
                      f"_p.UNUSED_TIMEOUT = {unused_timeout}", timeout=60)
        rss0 = k.rss()
        k.execute("%load_ext plan_widgets", timeout=60)
        time.sleep(3.0)
        if unused_timeout is not None:
            k.wait_until(lambda: k.children_rss().get("cli_count", 0) == 0, 60,
                         "the unused pre-started CLI to close")
        since = k.mark()
        t0 = time.monotonic()
        k.start("%%claude\nHello")
        m = k.wait_message(has_text("Hello from the scripted"), since, 120, "first text")
        took = float(m["_t"] - t0)
        k.wait_until(lambda: footers(k, since), 60, "the turn's end")
        return {"first_text": took, "kernel_mb": (k.rss() - rss0) / 2**20,
                "cli_mb": k.children_rss().get("cli", 0) / 2**20}
    finally:
        k.shutdown()


def linear(early: float, late: float) -> bool:
    """The growth per session from 1 to n/2 sessions and from n/2 to n agree within half the
    larger of the two (0.1 MB at least: RSS moves by pages)."""
    return abs(early - late) <= 0.5 * max(abs(early), abs(late), 0.2)


def fig_many(b: Bench) -> list[Row]:
    mb = 2 ** 20
    n = 4 if b.quick else N
    one_, mid, _ = _points(n)
    runs = [one_kernel(b, n, latency=i == 0) for i in range(b.repeat)]
    early_s = [(r["at"][mid][0] - r["at"][one_][0]) / (mid - one_) / mb for r in runs]
    late_s = [(r["at"][n][0] - r["at"][mid][0]) / (n - mid) / mb for r in runs]
    per_s = [(r["at"][n][0] - r["at"][0][0]) / n / mb for r in runs]
    first_s = [(r["at"][1][0] - r["at"][0][0]) / mb for r in runs]
    cli_s = [r["at"][n][1] / max(1, r["at"][n][2]) / mb for r in runs]
    asleep_s = [(r["asleep"][0] - r["at"][0][0]) / n / mb for r in runs]
    early, late = median(early_s), median(late_s)
    one = runs[0]
    b.log(f"  one kernel x{len(runs)}: kernel MB/session 1->{mid} {early_s}, {mid}->{n} "
          f"{late_s}; asleep {asleep_s}; CLIs left asleep {[r['asleep'][2] for r in runs]}")
    kernels = many_kernels(b, n)
    per_kernel = [(r + c) / mb for r, c, _ in kernels]
    return [
        Row("8", f"kernel RSS per live session, {n} sessions in one kernel", "MB", median(per_s),
            goal="linear in sessions", met=linear(early, late), samples=per_s,
            note=f"per session from 1 to {mid} sessions {early:.2f} MB, from {mid} to {n} "
                 f"{late:.2f} MB (linear: within half the larger); first session "
                 f"{median(first_s):.1f} MB; {len(runs)} fresh kernels, medians"),
        Row("8", "CLI RSS per live session (each session holds one CLI)", "MB", median(cli_s),
            samples=cli_s, note=f"{one['at'][n][2]} CLIs at {n} sessions"),
        Row("8", f"the same {n} sessions asleep (CLIs closed): kernel RSS per session", "MB",
            median(asleep_s), samples=asleep_s,
            note=f"put to sleep as after ClaudeMagics.idle_timeout: {one['slept']} of {n}; "
                 f"CLIs left: {max(r['asleep'][2] for r in runs)}, their RSS "
                 f"{max(r['asleep'][1] for r in runs) / mb:.0f} MB; kernel RSS from the "
                 "kernel before the first session"),
        Row("8", f"{n} kernels with one session each: kernel + CLI RSS per kernel", "MB",
            median(per_kernel), goal="(reported)",
            note=f"min {min(per_kernel):.0f}, max {max(per_kernel):.0f} MB; total "
                 f"{sum(per_kernel):.0f} MB"),
        Row("8", f"turn latency with {n} sessions of one kernel answering at once (send -> "
            "footer)", "s", median(one["together"]), median(one["alone"]),
            "one session's turn alone", "(reported)", samples=one["together"],
            anchor_samples=one["alone"]),
    ]


def fig_prestart(b: Bench) -> list[Row]:
    pre: list[dict[str, float]] = []
    closed: list[dict[str, float]] = []
    bare: list[float] = []
    for i in range(b.repeat):
        runs = [lambda: pre.append(first_turn_prestarted(b)),
                lambda: bare.append(first_turn_bare(b)),
                lambda: closed.append(first_turn_prestarted(b, unused_timeout=1.0))]
        for run in runs if i % 2 == 0 else runs[::-1]:
            run()
        b.log(f"  rep {i + 1}: pre-started {pre[-1]['first_text']:.2f} s, after it closed "
              f"unused {closed[-1]['first_text']:.2f} s, bare script {bare[-1]:.2f} s")
    t_pre = [x["first_text"] for x in pre]
    t_closed = [x["first_text"] for x in closed]
    r = Row("9", "first turn after `%load_ext` and a 3 s pause (the CLI pre-started): cell run "
            "-> first streamed text", "s", median(t_pre), median(bare),
            "a bare SDK script started when the cell runs -> first text delta", "ratio <= 0.6",
            samples=t_pre, anchor_samples=bare,
            note=f"the pre-start holds its CLI from `%load_ext` until the first cell (or "
                 f"{prestart_unused()} s unused): {median([x['cli_mb'] for x in pre]):.0f} MB; "
                 f"the kernel after `%load_ext` and this first turn: "
                 f"+{median([x['kernel_mb'] for x in pre]):.0f} MB (the SDK, the session, "
                 "ipywidgets); a prompt right after `%load_ext` gets no head start (figure 3's "
                 "first turn, like for like)")
    r.met = r.ratio is not None and r.ratio <= 0.6
    c = Row("9", "the same, the pre-started CLI closed unused before the cell (the SDK still "
            "imported)", "s", median(t_closed), median(bare),
            "a bare SDK script started when the cell runs -> first text delta", "(reported)",
            samples=t_closed, anchor_samples=bare,
            note="what the first cell pays once the unused CLI has closed: one CLI start")
    return [r, c]


def prestart_unused() -> int:
    from plan_widgets.ipython.prestart import UNUSED_TIMEOUT

    return int(UNUSED_TIMEOUT)
