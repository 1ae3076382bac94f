"""One kernel for many tests of a worker: the ``kernel`` fixture's kernel, tidied and lent again.

Why: CI's 2 cores are busy for the whole run, so its time is the suite's CPU time, and a kernel
fixture's kernel cost about 1.8 CPU-s before its test did anything: its start (~0.45 CPU-s) and
the SDK's import at the first session (~1.3 CPU-s, most of it ``mcp``'s types). MEASURED
(2 cores, 2026-12-07): 0.41-0.55 CPU-s to kernel_info, +1.22-1.51 CPU-s for the session's
imports. About 120 tests take the fixture.

What a test gets is what a fresh kernel gave it: the extension loaded, ``plan_widgets``
imported, no session, no widget, no variable of an earlier test, ``ClaudeMagics`` at its
defaults, the environment the kernel started with, and its own folder as the working directory
and HOME. A kernel is lent again only when all of that could be made true and checked:

- its test passed (a failed test's kernel is evidence, and may be in any state);
- its test ran nothing that changes what cannot be put back here (``NOT_TIDIED``: a
  ``%config`` of the policy, a decider, code that replaces a module's function...): such a
  test's kernel is shut down, and the next test starts a fresh one;
- after every session closed (bounded), no task of the package runs, no child process is left
  (CLI, scripted model), no call of a notebook function is stuck, and the kernel answered.

Otherwise it is shut down, as every kernel was before.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from kernel import Kernel

REUSE = os.environ.get("PLAN_WIDGETS_TEST_KERNEL_REUSE", "1") != "0"
"""``PLAN_WIDGETS_TEST_KERNEL_REUSE=0``: a fresh kernel for every test, as before."""

NOT_TIDIED = re.compile(
    r"%config(?!\s+ClaudeMagics\.)|ClaudePolicy|decide_with|os\.environ|sys\.modules|setattr\(|monkeypatch"
    r"|\bglobal\b|__class__|importlib|\breload\b|os\.chdir|signal\.|threading\.|register_tool"
    r"|%claude\s+(tools|policy|rules)|\bdel\s+plan_widgets|sys\.path"
)
"""Code after which a kernel is not lent again: what it changes is not reset below."""

LOADED = "%load_ext plan_widgets\nimport plan_widgets"
"""The fixture's first cell (``In[1]`` of every kernel it lends)."""

REMEMBER = """
import os as _os, sys as _sys, types as _types
_m = _types.ModuleType("_plan_widgets_test_reuse")
_sys.modules["_plan_widgets_test_reuse"] = _m
_m.env = dict(_os.environ)
del _os, _sys, _types, _m
"""
"""Run once after ``%load_ext``: the kernel's environment as it started (kept outside the user
namespace, which the tidy clears)."""

TIDY = """
import asyncio as _asyncio, os as _os, sys as _sys, time as _time
import psutil as _psutil
def _plan_widgets_tidy():
    import ipywidgets
    import plan_widgets.ipython.registry as r
    from plan_widgets.agent import commands, tasks
    from plan_widgets.ipython import obtain, policy, unattended
    from plan_widgets.ipython.kernel import budget, user_tools
    from plan_widgets.render import engine
    from plan_widgets.store import read
    problems = []
    if budget._stuck and any(t.is_alive() for t in budget._stuck):
        problems.append("a notebook function's call is stuck")
    ip = get_ipython()
    magics = ip.magics_manager.registry.get("ClaudeMagics")
    for name in magics.trait_names(config=True):
        magics.set_trait(name, magics.trait_defaults(name))
    if "ClaudeMagics" in magics.config:
        del magics.config["ClaudeMagics"]
    ipywidgets.Widget.close_all()
    commands._known.clear(); user_tools._tools.clear(); obtain._unused.clear()
    read._warned.clear(); engine._remote_images = False
    r._sessions.clear(); r._from_config.clear(); r._bars.clear()
    unattended._decider = None; unattended._decider_unattended = False
    policy._policy = None
    env = _sys.modules["_plan_widgets_test_reuse"].env
    _os.environ.clear(); _os.environ.update(env)
    return problems
async def _plan_widgets_settle():
    import plan_widgets.ipython.registry as r
    from plan_widgets.agent import tasks
    await r.close_all(10)
    me = _psutil.Process()
    deadline = _time.monotonic() + 10
    while _time.monotonic() < deadline:
        busy = [t for t in tasks._running if not t.done()]
        kids = []
        for p in me.children(recursive=True):
            try:
                if p.status() != _psutil.STATUS_ZOMBIE:
                    kids.append(p)
            except _psutil.Error:
                pass
        if not busy and not kids:
            return []
        await _asyncio.sleep(0.05)
    return ([f"tasks of the package still run: {[t.get_name() for t in busy]}"] if busy else []) + (
        [f"child processes left: {[p.name() for p in kids]}"] if kids else [])
_plan_widgets_problems = (await _plan_widgets_settle()) + _plan_widgets_tidy()
print("TIDY:" + ("; ".join(_plan_widgets_problems) or "clean"))
get_ipython().reset(new_session=True)
get_ipython().history_manager.store_inputs(1, LOADED)
get_ipython().execution_count = 2
import plan_widgets
""".replace("LOADED", repr(LOADED))
"""After a test: every session closed and checked gone, the package's kernel-wide state put
back (what ``%load_ext`` left), widgets closed, the user namespace cleared, the history a new
one whose only cell is the fixture's ``%load_ext`` (run with ``store_history=False``, this
code is in no history)."""


def note(nodeid: str, why_not: str | None) -> None:
    """``PLAN_WIDGETS_TEST_KERNEL_REUSE_LOG=FILE``: a line per test, its kernel lent again or
    why not (to see how often it is)."""
    path = os.environ.get("PLAN_WIDGETS_TEST_KERNEL_REUSE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{nodeid}\t{why_not or 'lent again'}\n")


def executed(k: Kernel) -> list[str]:
    """The code the test ran in ``k`` (execute_request messages sent so far)."""
    return list(getattr(k, "sent_code", []))


def tidy(k: Kernel) -> str | None:
    """Make ``k`` as a fresh kernel fixture's kernel is; ``None`` when done, else why not."""
    if not REUSE:
        return "reuse is off"
    code = "\n".join(executed(k))
    m = NOT_TIDIED.search(code)
    if m:
        return f"the test ran {m.group(0)!r}"
    try:
        out = k.execute(TIDY, timeout=60, allow_error=True, store_history=False)
    except Exception as e:  # the kernel did not answer in time: not lent again
        return f"the tidy did not finish: {e}"
    if out["reply"]["status"] != "ok":
        return f"the tidy failed: {out['text'][-500:]}"
    line = next((x for x in out["text"].splitlines() if x.startswith("TIDY:")), "TIDY:?")
    if line != "TIDY:clean":
        return line.removeprefix("TIDY:")
    return None


def move(k: Kernel, workdir: Path) -> None:
    """Lend ``k`` to a test in ``workdir``: its folder, HOME and scratch dirs, a clean log."""
    home = workdir / ".home"
    home.mkdir(parents=True, exist_ok=True)
    k.execute(
        "import os as _os\n"
        f"_os.chdir({str(workdir)!r})\n"
        f"_os.environ['HOME'] = {str(home)!r}\n"
        f"_os.environ['IPYTHONDIR'] = {str(home / '.ipython')!r}\n"
        f"_os.environ['JUPYTER_RUNTIME_DIR'] = {str(home / '.runtime')!r}\n"
        "del _os", timeout=60, store_history=False)
    k.forget(workdir)
