"""Where the kernel's CPU goes while one 200 KB answer streams (figure 4).

``python -m benchmarks._profile [OUT.raw]`` starts a benchmark kernel, warms a session up, then
samples the kernel process with py-spy (``pip install py-spy``; found on PATH or in
benchmarks/.venv-anchors) during one 200 KB / 5,000-delta turn, and prints the samples by
category (idle waits are left out of the percentages).
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ._figures import ANCHOR_VENV, STREAM, Bench, footers, kernel_setup

CATEGORIES = [
    ("Markdown: render_html (markdown-it-py)", ("render_html",)),
    ("Markdown: stable_prefix (block parse)", ("stable_prefix",)),
    ("SDK: read and parse CLI messages", ("claude_agent_sdk",)),
    ("widgets: comm messages, state, serialization", ("ipywidgets", "comm", "session.py",
                                                      "jupyter_client")),
    ("IOPub thread (sending)", ("IOPubThread", "iostream.py")),
    ("plan_widgets session/view", ("plan_widgets",)),
]


def py_spy() -> str:
    found = shutil.which("py-spy") or str(ANCHOR_VENV / "bin" / "py-spy")
    if not Path(found).exists():
        raise SystemExit("py-spy not found: pip install py-spy (or python -m benchmarks "
                         "--setup-anchors, then pip install py-spy into that venv)")
    return found


def categorize(raw: Path) -> list[tuple[str, int]]:
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        last = frames[-1]
        if "select (selectors" in last or "poll (" in last or "wait (threading" in last:
            counts["(idle)"] += int(n)
            continue
        for name, keys in CATEGORIES:
            if any(k in stack for k in keys):
                counts[name] += int(n)
                break
        else:
            counts["other"] += int(n)
    return counts.most_common()


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "stream-profile.raw").resolve()
    b = Bench(1, True, print)
    k = b.kernel()
    try:
        kernel_setup(k)
        cwd = b.fresh_dir("p")
        k.execute(f"%%claude --session p --cwd {cwd} --scripted {STREAM}\ntiny warm-up", 120)
        spy = subprocess.Popen([py_spy(), "record", "-p", str(k.process.pid), "-o", str(out),
                                "-f", "raw", "-r", "200", "--nonblocking"])
        time.sleep(1)
        since = k.mark()
        k.execute("%%claude --session p\nstream the long answer", timeout=300)
        k.wait_until(lambda: footers(k, since), 60, "turn end")
        spy.send_signal(2)
        spy.wait(30)
    finally:
        k.shutdown()
    rows = categorize(out)
    busy = sum(n for name, n in rows if name != "(idle)")
    print(f"kernel samples while the 200 KB answer streamed: {busy} busy")
    for name, n in rows:
        if name != "(idle)":
            print(f"  {100 * n / max(busy, 1):5.1f}%  {name}")


if __name__ == "__main__":
    main()
