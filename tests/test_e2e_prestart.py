"""The default session's CLI starts when the extension loads, and the first cell uses it (or,
when its options need another CLI, the unused one gives way without a trace).

A real kernel and the real CLI against the scripted model (see conftest); the scripted model
stands for credentials through ``c.ClaudeMagics.scripted`` in the kernel's config file.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel import Kernel, process_running

pytestmark = pytest.mark.e2e


@pytest.fixture
def scripted_kernel(workdir: Path) -> Iterator[Kernel]:
    profile = workdir / ".home" / ".ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(
        f"c.ClaudeMagics.scripted = {str(workdir / 'chat_context.yaml')!r}\n")
    k = Kernel(workdir)
    try:
        yield k
    finally:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  timeout=30, allow_error=True)
        k.shutdown()


def _prestarted(k: Kernel, unused_timeout: float | None = None) -> str:
    if unused_timeout is not None:  # before the pre-start reads it
        k.execute("import plan_widgets.ipython.prestart as _p\n"
                  f"_p.UNUSED_TIMEOUT = {unused_timeout}")
    k.execute("%load_ext plan_widgets\nimport plan_widgets")
    k.wait_until(lambda: k.eval("getattr(plan_widgets.get(), 'status', None)") == "'idle'",
                 90, "the pre-started session to be ready")
    return k.eval("plan_widgets.get().session_id")


def test_the_first_cell_uses_the_cli_started_at_load(scripted_kernel: Kernel) -> None:
    k = scripted_kernel
    sid = _prestarted(k)
    pid = k.eval("plan_widgets.get().cli_pid")
    assert pid != "None"
    out = k.execute("%%claude --mode acceptEdits\nmy name is Ada")
    assert "Traceback" not in out["text"]
    assert any("remember" in md for md in k.markdown_outputs())
    assert k.eval("plan_widgets.get().session_id") == sid  # the same session, the same CLI
    assert k.eval("plan_widgets.get().cli_pid") == pid
    assert k.eval("plan_widgets.get().mode") == "'acceptEdits'"


def test_a_cell_that_needs_another_cli_replaces_the_unused_one(scripted_kernel: Kernel,
                                                               workdir: Path) -> None:
    k = scripted_kernel
    sid = _prestarted(k).strip("'")
    pid = int(k.eval("plan_widgets.get().cli_pid"))
    (workdir / "sub").mkdir()
    out = k.execute("%%claude --cwd sub\nmy name is Ada")
    assert "Traceback" not in out["text"] and "use --new" not in out["text"], out["text"]
    assert k.eval("plan_widgets.get().session_id").strip("'") != sid
    assert k.eval("plan_widgets.get().options.cwd") == repr(str(workdir / "sub"))
    # the unused session left nothing: no log, no process
    assert not list((workdir / ".plan_widgets" / "sessions").glob(f"{sid}*"))
    k.wait_until(lambda: not process_running(pid), 30, "the unused CLI to exit")
    assert sid not in k.execute("%claude sessions")["text"]


def test_nothing_starts_without_credentials(workdir: Path) -> None:
    """No credentials, no scripted model: the pre-start ends without importing the SDK or
    starting a session (the first cell says the credentials line anyway). Its task is waited
    for, not slept past: on a busy machine a sleep ended before it had decided."""
    k = Kernel(workdir)
    try:
        k.execute("import asyncio, sys\nimport plan_widgets.agent.tasks as _t\n"
                  "_spawned = []\n_spawn = _t.spawn\n"
                  "def _spy(coro, name=None):\n"
                  "    _spawned.append(_spawn(coro, name=name))\n    return _spawned[-1]\n"
                  "_t.spawn = _spy")
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        out = k.execute("await asyncio.sleep(0.5)  # past the pre-start's DELAY\n"
                        "_pre = [t for t in _spawned if t.get_name() == 'claude-prestart']\n"
                        "await asyncio.wait_for(asyncio.gather(*_pre), 60)\n"
                        "print(len(_pre), plan_widgets.get(), 'claude_agent_sdk' in sys.modules)")
        assert out["text"].strip() == "1 None False", out["text"]
    finally:
        k.shutdown()


def test_settings_changed_after_load_still_apply(scripted_kernel: Kernel, workdir: Path) -> None:
    k = scripted_kernel
    sid = _prestarted(k)
    k.execute("%config ClaudeMagics.mode = 'acceptEdits'\n"
              "%config ClaudeMagics.approval_timeout = 60")
    k.execute("%%claude\nmy name is Ada")
    assert k.eval("plan_widgets.get().session_id") == sid
    assert k.eval("plan_widgets.get().mode") == "'acceptEdits'"
    assert k.eval("plan_widgets.get().options.approval_timeout") == "60.0"
    # a setting that needs another CLI: the unused session gives way
    k2_log = workdir / "logs"
    k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)")
    k.execute("%reload_ext plan_widgets")
    k.wait_until(lambda: k.eval("getattr(plan_widgets.get(), 'status', None)") == "'idle'",
                 90, "a new pre-started session")
    again = k.eval("plan_widgets.get().session_id")
    k.execute(f"%config ClaudeMagics.log_dir = {str(k2_log)!r}")
    k.execute("%%claude\nhello")
    assert k.eval("plan_widgets.get().session_id") != again
    assert list(k2_log.glob("*.jsonl"))


def test_an_unused_prestarted_cli_closes_soon(scripted_kernel: Kernel, workdir: Path) -> None:
    """No cell used it: the CLI closes after the pre-start's own short timeout (not the idle
    hour), leaving no log; the first cell then starts the session as without a pre-start."""
    k = scripted_kernel
    sid = _prestarted(k, unused_timeout=3).strip("'")
    pid = int(k.eval("plan_widgets.get().cli_pid"))
    assert k.eval("plan_widgets.get().options.idle_timeout") == "3600.0"  # the hour stays
    k.wait_until(lambda: not process_running(pid), 60, "the unused CLI to exit")
    k.wait_until(lambda: k.eval("plan_widgets.get()") == "None", 30, "the session to go")
    assert not list((workdir / ".plan_widgets" / "sessions").glob(f"{sid}*"))
    out = k.execute("%%claude\nmy name is Ada")
    assert "Traceback" not in out["text"]
    assert any("remember" in md for md in k.markdown_outputs())
    assert k.eval("plan_widgets.get().session_id").strip("'") != sid


def test_a_used_prestarted_cli_stays(scripted_kernel: Kernel) -> None:
    """Once a cell used it, the pre-start's timeout no longer applies."""
    k = scripted_kernel
    sid = _prestarted(k, unused_timeout=5)  # counted from the CLI's being ready
    pid = k.eval("plan_widgets.get().cli_pid")
    k.execute("%%claude\nmy name is Ada")
    time.sleep(6)  # past the pre-start's timeout
    assert k.eval("plan_widgets.get().session_id") == sid
    assert k.eval("plan_widgets.get().cli_pid") == pid
    assert k.eval("plan_widgets.get().status") == "'idle'"
