"""Figure 10: a real JupyterHub. One user's plan flow alone, and beside another user's runaway
session (a reply streamed without end), as a ratio; the memory a user's server holds.

Uses the Hub of the test suite (``tests/hub.py``: JupyterHub 6, SimpleLocalProcessSpawner,
configurable-http-proxy from ``scripts/test``), so it needs the ``hub`` extra.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from ._figures import Bench, Row, median

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "plan_widgets" / "scripted" / "examples" / "plan_approve.yaml"
RUNAWAY = ("steps:\n  - repeat: true\n    interval: 0.01\n    reply:\n"
           "      - text_size: 400000\n        deltas: 6000\n")
RSS = ("__import__('psutil').Process(__import__('os').getppid()).memory_info().rss + sum("
       "c.memory_info().rss for c in __import__('psutil').Process(__import__('os').getppid())"
       ".children(recursive=True))")


async def _flow(hub: Any, k: Any, n: int, close: bool = True) -> float:
    """One plan flow in kernel ``k`` (session ``f{n}``): cell run -> card -> approve -> done."""
    from hub import until

    home = hub.home(k.user)
    (home / "hello.py").unlink(missing_ok=True)
    k.widgets.clear()  # the cards of earlier flows
    t0 = time.monotonic()
    await k.execute(f"%%claude --session f{n} --scripted {PLAN} --plan\nAdd a greeting", 180)
    approve = await k.wait_widget("ButtonModel", 120, description="Approve, auto-accept edits")
    k.click(approve)
    await until(lambda: (home / "hello.py").exists(), 120, "the approved edit")

    async def idle() -> bool:
        return await k.eval(f"plan_widgets.get('f{n}').status") == "'idle'"
    await until(idle, 120, "the turn to end", tick=0.05)
    took = time.monotonic() - t0
    if close:
        await k.execute(f"await plan_widgets.get('f{n}').close()", 60)
    return took


async def _run(b: Bench) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from hub import Hub, UserKernel, until

    hub = Hub(b.fresh_dir("hub"))
    try:
        await hub.ready()
        await asyncio.gather(hub.start_server("ada"), hub.start_server("rex"))
        k = await UserKernel(hub, "ada").start()
        await k.execute("%load_ext plan_widgets\nimport plan_widgets")
        await _flow(hub, k, 0, close=False)  # warm: the SDK and ipywidgets imported once
        rss = int(await k.eval(RSS))  # the server, the kernel and one idle session's CLI
        await k.execute("await plan_widgets.get('f0').close()", 60)
        alone = [await _flow(hub, k, i + 1) for i in range(b.repeat)]
        (hub.home("rex") / "runaway.yaml").write_text(RUNAWAY)
        wild = await UserKernel(hub, "rex").start()
        await wild.execute("%load_ext plan_widgets\nimport plan_widgets")
        await wild.execute("%%claude --scripted runaway.yaml --background\nGo on forever")

        async def streaming() -> bool:
            return await wild.eval("plan_widgets.get().status") == "'working'"
        await until(streaming, 120, "the runaway to stream")
        beside = [await _flow(hub, k, 100 + i) for i in range(b.repeat)]
        still = await wild.eval("plan_widgets.get().status")
        await wild.execute("await plan_widgets.get().close()", 60)
        await wild.close()
        await k.close()
        return {"alone": alone, "beside": beside, "rss": rss, "still": still}
    finally:
        hub.stop()


def fig_hub(b: Bench) -> list[Row]:
    r = asyncio.run(_run(b))
    b.log(f"  hub: alone {r['alone']}, beside a runaway {r['beside']}")
    row = Row("10", "JupyterHub: one user's plan flow (cell run -> card -> approve -> edit done) "
              "while another user's session streams without end", "s", median(r["beside"]),
              median(r["alone"]), "the same flow with no other user busy",
              "(the figure the isolation test relies on)", samples=r["beside"],
              anchor_samples=r["alone"],
              note=f"the runaway was still {r['still']} at the end")
    return [row, Row("10", "JupyterHub: a user's server + kernel + one idle session's CLI, RSS",
                     "MB", r["rss"] / 2**20, note="after a plan flow; what to plan per user")]
