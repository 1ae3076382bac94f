"""Where the kernel's time goes while one 200 KB answer streams (figure 4).

``python -m benchmarks._profile`` starts a benchmark kernel, warms a session up, then profiles
the kernel's main thread (the one running the event loop, where the SDK, the session and the
widgets all run) with cProfile during one 200 KB / 5,000-delta turn, and prints the time by
part. cProfile's own overhead inflates code made of many small calls (the SDK's parsing), so
read the shares as an upper bound for those.
"""

from __future__ import annotations

from ._figures import STREAM, Bench, footers, kernel_setup

_REPORT = r'''
import pstats as _ps
_st = _ps.Stats(_pr)
_idle = sum(v[2] for (f, _l, n), v in _st.stats.items()
            if f == "~" and ("poll" in n or "select" in n or "acquire" in n))
_tot = sum(v[2] for v in _st.stats.values()) - _idle  # busy: waiting in epoll left out
def _cum(file_part, name):
    return sum(v[3] for (f, _l, n), v in _st.stats.items() if file_part in f and n == name)
def _self(*parts):
    return sum(v[2] for (f, _l, n), v in _st.stats.items() if any(p in f for p in parts))
_render = _cum("render/markdown.py", "render_stream")  # one parse: stable prefix + both parts
_flush = _cum("widgets/markdown.py", "flush")
_rows = [
    ("Markdown: render_stream, once per update", _render),
    ("widgets: the flush's widget updates (comm messages)", _flush - _render),
    ("SDK: reading and parsing the CLI's messages (self time)", _self("claude_agent_sdk")),
    ("asyncio / anyio scheduling (self time)", _self("asyncio", "anyio")),
    ("session: text deltas (cumulative, incl. the view's append)",
     _cum("agent/runner.py", "_on_text_delta")),
]
_rows.append(("everything else (kernel, iopub, json, ...)",
              _tot - sum(t for name, t in _rows if not name.startswith("session"))))
print(f"main thread busy {_tot:.2f} s during the turn (idle {_idle:.2f} s left out)")
for _name, _t in _rows:
    print(f"  {100 * _t / _tot:5.1f}%  {_t:6.3f} s  {_name}")
'''


def main() -> None:
    b = Bench(1, True, print)
    k = b.kernel()
    try:
        kernel_setup(k)
        cwd = b.fresh_dir("p")
        k.execute(f"%%claude --session p --cwd {cwd} --scripted {STREAM}\ntiny warm-up", 120)
        k.execute("import cProfile as _cp\n_pr = _cp.Profile()\n_pr.enable()")
        since = k.mark()
        k.execute("%%claude --session p\nstream the long answer", timeout=300)
        k.wait_until(lambda: footers(k, since), 60, "turn end")
        k.execute("_pr.disable()")
        print(k.execute(_REPORT, timeout=120)["text"])
    finally:
        k.shutdown()


if __name__ == "__main__":
    main()
