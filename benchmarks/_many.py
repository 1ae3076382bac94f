"""Figures 8 and 9 (issue 23): many sessions, and a first turn faster than a bare script.

8. Memory per live session, kernel side and CLI side: 1, 5 and 10 sessions in one kernel
   (the growth per session between 1 and 5, and between 5 and 10: linear if they agree), and
   10 kernels with one session each; a turn's latency with 10 sessions answering at once, as
   a ratio to one session alone.
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


def one_kernel(b: Bench) -> dict[str, Any]:
    k = b.kernel()
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        _turn(k, "warm", b.fresh_dir("w"))  # the SDK and ipywidgets, imported once
        k.execute("await plan_widgets.get('warm').close()", timeout=60)
        time.sleep(0.5)
        at: dict[int, tuple[int, int, int]] = {0: _sides(k)}
        for i in range(N):
            _turn(k, f"s{i}", b.fresh_dir("s"))
            if i + 1 in (1, 5, N):
                time.sleep(0.5)
                at[i + 1] = _sides(k)
        alone: list[float] = []
        for _ in range(b.repeat):
            alone += _concurrent(k, ["s0"])
        together: list[float] = []
        for _ in range(max(1, b.repeat // 2)):
            together += _concurrent(k, [f"s{i}" for i in range(N)])
        return {"at": at, "alone": alone, "together": together}
    finally:
        k.shutdown()


def many_kernels(b: Bench) -> list[tuple[int, int, int]]:
    kernels: list[BenchKernel] = []
    try:
        for _ in range(N):
            k = b.kernel()
            kernels.append(k)
            k.execute("%load_ext plan_widgets\nimport plan_widgets")
            _turn(k, "default", b.fresh_dir("k"))
        time.sleep(0.5)
        return [_sides(k) for k in kernels]
    finally:
        for k in kernels:
            k.shutdown()


def first_turn_prestarted(b: Bench) -> float:
    """A fresh kernel whose config names the scripted model (as a user's credentials would
    be found), ``%load_ext``, 3 s, then a cell with a prompt: the time to its first text."""
    d = b.fresh_dir("p")
    profile = d / ".home" / ".ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(f"c.ClaudeMagics.scripted = {TINY!r}\n")
    k = BenchKernel(d)
    try:
        k.execute("%load_ext plan_widgets", timeout=60)
        time.sleep(3.0)
        since = k.mark()
        t0 = time.monotonic()
        k.start("%%claude\nHello")
        m = k.wait_message(has_text("Hello from the scripted"), since, 120, "first text")
        return float(m["_t"] - t0)
    finally:
        k.shutdown()


def fig_many(b: Bench) -> list[Row]:
    mb = 2 ** 20
    one = one_kernel(b)
    at = one["at"]
    k_per = [(at[n][0] - at[0][0]) / n / mb for n in (1, 5, N)]
    early = (at[5][0] - at[1][0]) / 4 / mb
    late = (at[N][0] - at[5][0]) / (N - 5) / mb
    cli_each = at[N][1] / max(1, at[N][2]) / mb
    b.log(f"  one kernel: kernel MB/session after 1, 5, {N}: {[round(x, 1) for x in k_per]}; "
          f"CLI {cli_each:.0f} MB each")
    kernels = many_kernels(b)
    per_kernel = [(r + c) / mb for r, c, _ in kernels]
    ratio_rows = []
    lat = Row("8", f"turn latency with {N} sessions of one kernel answering at once (send -> "
              "footer)", "s", median(one["together"]), median(one["alone"]),
              "one session's turn alone", "(reported)", samples=one["together"],
              anchor_samples=one["alone"])
    ratio_rows.append(lat)
    return [
        Row("8", f"kernel RSS per live session, {N} sessions in one kernel", "MB", k_per[-1],
            goal="linear in sessions", met=abs(early - late) <= max(2.0, 0.5 * abs(early)),
            note=f"per session from 1 to 5 sessions {early:.1f} MB, from 5 to {N} {late:.1f} "
                 f"MB; first session {k_per[0]:.1f} MB"),
        Row("8", "CLI RSS per live session (each session holds one CLI)", "MB", cli_each,
            note=f"{at[N][2]} CLIs at {N} sessions; an idle session's CLI sleeps after "
                 "ClaudeMagics.idle_timeout"),
        Row("8", f"{N} kernels with one session each: kernel + CLI RSS per kernel", "MB",
            median(per_kernel), goal="(reported)",
            note=f"min {min(per_kernel):.0f}, max {max(per_kernel):.0f} MB; total "
                 f"{sum(per_kernel):.0f} MB"),
        *ratio_rows,
    ]


def fig_prestart(b: Bench) -> list[Row]:
    pre: list[float] = []
    bare: list[float] = []
    for i in range(b.repeat):
        if i % 2 == 0:
            pre.append(first_turn_prestarted(b))
            bare.append(first_turn_bare(b))
        else:
            bare.append(first_turn_bare(b))
            pre.append(first_turn_prestarted(b))
        b.log(f"  rep {i + 1}: pre-started {pre[-1]:.2f} s, bare script {bare[-1]:.2f} s")
    r = Row("9", "first turn after `%load_ext` and a 3 s pause (the CLI pre-started): cell run "
            "-> first streamed text", "s", median(pre), median(bare),
            "a bare SDK script started when the cell runs -> first text delta", "ratio <= 0.6",
            samples=pre, anchor_samples=bare)
    r.met = r.ratio is not None and r.ratio <= 0.6
    return [r]
