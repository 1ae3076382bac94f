"""Scratch folders left by killed kernels are removed by the next start (issue 25), and never
another live kernel's. Real processes: one is killed (SIGKILL, as a kernel the OS or the user
killed), one stays alive; their folders are made by the product's own ``ScratchDir``."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from plan_widgets.agent import scratch
from plan_widgets.agent.scratch import OWNER, PREFIX, ScratchDir, sweep

# a process that makes its scratch folder, says where, and waits to be killed; it sweeps
# nothing itself (a maker's own sweep, slow to start on a busy machine, removed the other
# maker's folder right after the test killed it: a CI run failed so)
MAKER = ("import sys, time\n"
         "from plan_widgets.agent import scratch\n"
         "from plan_widgets.agent.scratch import ScratchDir\n"
         "scratch._swept.set()\n"
         "d = ScratchDir()\n"
         "(d.path / 'tasks').mkdir()\n"
         "(d.path / 'tasks' / 'x.json').write_text('{}')\n"
         "print(d.path, flush=True)\n"
         "time.sleep(120)\n")


def _maker(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    p = subprocess.Popen([sys.executable, "-c", MAKER], stdout=subprocess.PIPE, text=True,
                         env=env)
    assert p.stdout is not None
    line = p.stdout.readline().strip()  # bounded: the process sleeps 120 s at most
    assert line, "the process made no folder"
    return p, Path(line)


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Folders here only: the machine's temporary directory holds other kernels' folders."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    done = scratch.threading.Event()
    done.set()  # no background sweep but the one a test asks for
    monkeypatch.setattr(scratch, "_swept", done)
    return tmp_path


def test_a_killed_kernels_folder_goes_and_a_live_ones_stays(tmp: Path) -> None:
    killed, gone = _maker(tmp)
    live, kept = _maker(tmp)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        assert gone.is_dir() and (gone / OWNER).exists()  # the killed kernel left it
        assert sweep() == [gone]
        assert not gone.exists()
        assert kept.is_dir()  # a live kernel's folder stays
        assert sweep() == []
    finally:
        live.kill()
        live.wait(10)


def test_a_reused_pid_is_not_the_owner(tmp: Path) -> None:
    folder = tmp / f"{PREFIX}reused"
    folder.mkdir()
    # this process's pid, but a start time it does not have: the owner died, the pid was reused
    (folder / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename,
                                            "since": time.time() - 3600, "started_at": 1.0}))
    assert sweep() == [folder]


def test_an_older_versions_record_in_clock_ticks_is_judged_by_its_pid(tmp: Path) -> None:
    # before psutil the start time was written as clock ticks since boot, under "started":
    # read as seconds it would never match, and a live older kernel's folder would go
    folder = tmp / f"{PREFIX}older"
    folder.mkdir()
    (folder / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename,
                                            "since": time.time() - 60, "started": 123456}))
    assert sweep() == []
    assert folder.is_dir()


def test_folders_not_ours_to_judge_stay(tmp: Path) -> None:
    legacy = tmp / f"{PREFIX}legacy"  # no owner record: an older version's, maybe still live
    legacy.mkdir()
    other = tmp / "other-folder"
    other.mkdir()
    (other / OWNER).write_text(json.dumps({"pid": 2 ** 22 + 1, "started_at": None}))
    mine = ScratchDir()  # this live process's own
    try:
        assert sweep() == []
        assert legacy.is_dir() and other.is_dir() and mine.path.is_dir()
    finally:
        mine.remove()


def test_the_first_folder_sweeps_in_the_background(tmp: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    killed, gone = _maker(tmp)
    killed.kill()
    killed.wait(10)
    monkeypatch.setattr(scratch, "_swept", scratch.threading.Event())
    d = ScratchDir()
    try:
        deadline = time.monotonic() + 10
        while gone.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not gone.exists()
    finally:
        d.remove()


def test_a_folder_that_cannot_go_is_one_log_line(tmp: Path, caplog: pytest.LogCaptureFixture,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    killed, gone = _maker(tmp)
    killed.kill()
    killed.wait(10)
    monkeypatch.setattr(scratch, "_rmtree", lambda folder: f"{folder}: Permission denied")
    with caplog.at_level(logging.WARNING, logger="plan_widgets.agent.scratch"):
        assert sweep() == []
    assert len(caplog.records) == 1
    assert "could not remove the leftover scratch folder" in caplog.records[0].getMessage()
    assert str(gone) in caplog.records[0].getMessage()


@pytest.mark.e2e
def test_a_killed_kernels_folder_is_gone_after_the_next_kernels_first_turn(
        tmp_path: Path, workdir: Path) -> None:
    """End to end: a real kernel with a session is killed (as the frontend's restart does:
    SIGKILL), its scratch folder stays; the next kernel's first session removes it."""
    from kernel import Kernel

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cell = "%%claude --scripted plan_approve.yaml\nhello"

    def folders() -> set[Path]:
        return set(tmp.glob(f"{PREFIX}*"))

    first = Kernel(workdir, env={"TMPDIR": str(tmp)})
    try:
        first.execute("%load_ext plan_widgets\nimport plan_widgets")
        first.execute(cell)
        first.execute("await plan_widgets.get().wait(60)", timeout=90)
        left = folders()
        assert len(left) == 1
    finally:
        first.shutdown()  # killed: its session cannot clean up
    assert folders() == left
    second = Kernel(workdir, env={"TMPDIR": str(tmp)})
    try:
        second.execute("%load_ext plan_widgets\nimport plan_widgets")
        second.execute(cell)
        second.execute("await plan_widgets.get().wait(60)", timeout=90)
        deadline = time.monotonic() + 30
        while folders() & left and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not folders() & left
        assert len(folders()) == 1  # the live kernel's own folder stays
        second.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                       timeout=30, allow_error=True)
    finally:
        second.shutdown()
