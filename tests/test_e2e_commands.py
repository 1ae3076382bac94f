"""``%claude`` line commands end to end: what they say is true, in one line, never a traceback.

A corrupt event log, an id prefix that several sessions share, and commands sent to a session
that is closed or dead. A real kernel; where a session runs, the real CLI against the scripted
model.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from kernel import Kernel

from plan_widgets import model as ev
from plan_widgets.store import EventLog

pytestmark = pytest.mark.e2e


def log_dir(workdir: Path) -> Path:
    return workdir / ".plan_widgets" / "sessions"


def write_log(workdir: Path, sid: str, *, garbage: bool = False) -> Path:
    """A finished session's log (two turns, an approved plan); with a garbage line in its
    middle if asked (a torn last line would be ignored: this one is not)."""
    path = log_dir(workdir) / f"{sid}.jsonl"
    with EventLog(path) as log:
        for e in [
            ev.SessionStarted(session_id=sid, name="default", cwd=str(workdir),
                              resting_mode="default", model="m-1", ts=1.0e9),
            ev.TurnStarted(turn=1, prompt="plan it", plan=True, ts=1.0e9 + 1),
            ev.PlanProposed(decision_id="p1", plan="# The plan", ts=1.0e9 + 2),
            ev.PlanDecided(decision_id="p1", outcome="approved", by="user", ts=1.0e9 + 3),
            ev.TurnEnded(turn=1, result="success", cost_usd=0.25, ts=1.0e9 + 4),
        ]:
            log.append(e)
    if garbage:
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:2]) + b"{not json at all\n" + b"".join(lines[2:]))
    return path


def one_line(out: dict[str, object]) -> str:
    """The cell's only line of text (no traceback, no display). A mistake (a closed session,
    an unreadable log, an ambiguous id) fails its cell as ``UsageError: <line>``
    (tests/test_e2e_cell_errors.py): the line without that prefix."""
    text = str(out["text"])
    assert "Traceback" not in text, text
    reply: dict[str, object] = out["reply"]  # type: ignore[assignment]
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    if reply["status"] == "error":
        assert reply["ename"] == "UsageError" and lines[0].startswith("UsageError: "), out
        return lines[0][len("UsageError: "):]
    assert reply["status"] == "ok", out
    return lines[0]


def run(k: Kernel, line: str) -> str:
    return one_line(k.execute(line, allow_error=True))


def start_session(k: Kernel) -> str:
    """A live session that has answered one prompt; its id."""
    k.execute("%%claude --scripted fault_slow.yaml\nhello")
    assert k.eval("await plan_widgets.get().wait(30)") == "'idle'"
    return k.eval("plan_widgets.get().session_id").strip("'")


def plan_mode_events(k: Kernel) -> str:
    return k.eval("[(e.mode, e.state) for e in plan_widgets.get().events "
                  "if e.type == 'plan:mode']")


# -- a corrupt log -------------------------------------------------------------------------------
def test_a_corrupt_log_is_one_clear_line(kernel: Kernel, workdir: Path) -> None:
    path = write_log(workdir, "c0ffee-1111", garbage=True)
    where = f"{path}:3: malformed event line"
    for cmd in ("log", "cost", "plans"):
        line = run(kernel, f"%claude {cmd} c0ffee")
        assert line.startswith(f"%claude {cmd}: cannot read the event log: {where}"), line
    line = run(kernel, "%claude resume c0ffee")
    assert line.startswith(f"cannot resume c0ffee-1111: {where}"), line
    line = run(kernel, "%%claude --resume c0ffee\nhello")  # the cell's way in says the same
    assert line.startswith(f"%%claude: cannot resume c0ffee-1111: {where}"), line
    assert kernel.eval("plan_widgets.get()") == "None"  # nothing was started
    # without an id the log is left out, and the line says why
    for cmd in ("resume", "sessions", "log", "cost"):
        line = run(kernel, f"%claude {cmd}")
        assert "1 event log(s) cannot be read and are left out: c0ffee-1111.jsonl" in line, line
        assert where in line, line
    assert kernel.eval("1 + 1") == "2"


# -- ambiguous id prefixes -------------------------------------------------------------------
def test_an_ambiguous_prefix_names_the_sessions(kernel: Kernel, workdir: Path) -> None:
    write_log(workdir, "c0ffee-1111")
    write_log(workdir, "c0ffee-2222")
    both = "'c0ffee' matches 2 sessions: c0ffee-1111, c0ffee-2222 (give more of the id)"
    for cmd in ("log", "cost", "plans", "resume"):
        assert run(kernel, f"%claude {cmd} c0ffee") == both
    assert run(kernel, "%%claude --resume c0ffee\nhello") == f"%%claude: {both}"
    assert kernel.eval("plan_widgets.get()") == "None"
    assert "$0.2500" in run(kernel, "%claude cost c0ffee-2")  # more of the id: that one

    # one of the matches runs in this kernel: it is not picked silently either
    sid = start_session(kernel)
    other = f"{sid[:8]}-old"
    write_log(workdir, other)
    ids = ", ".join(sorted([sid, other]))
    for cmd in ("log", "cost", "resume"):
        assert run(kernel, f"%claude {cmd} {sid[:8]}") == (
            f"'{sid[:8]}' matches 2 sessions: {ids} (give more of the id)")
    assert run(kernel, f"%claude cost {sid}").startswith(f"default ({sid}): $")
    assert run(kernel, f"%claude cost {other}").startswith(f"default ({other}): $0.2500")


# -- a closed or dead session ----------------------------------------------------------------
def test_commands_say_what_they_did_and_a_closed_session_says_so(kernel: Kernel) -> None:
    sid = start_session(kernel)
    assert run(kernel, "%claude interrupt") == "default: no turn is running; nothing to interrupt"

    assert run(kernel, "%claude plan on") == (
        "default: plan mode on (asked; the marker shows when the CLI confirms)")
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().mode") == "'plan'", 30,
                      "plan mode")
    assert run(kernel, "%claude plan on") == "default: plan mode is already on"
    assert run(kernel, "%claude plan off") == (
        "default: plan mode off (asked; the marker shows when the CLI confirms)")
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().mode") == "'default'", 30,
                      "the resting mode")
    assert run(kernel, "%claude plan off") == (
        "default: plan mode is already off (mode Manual (default))")

    resume = f"%claude resume {sid} continues it"
    assert run(kernel, "%claude stop") == f"default: stopping (id {sid}; {resume})"
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().status") == "'closed'", 30,
                      "the session to close")
    assert run(kernel, "%claude stop") == f"default is already closed (id {sid}; {resume})"
    events = plan_mode_events(kernel)
    assert run(kernel, "%claude interrupt") == (
        f"default is closed: nothing to interrupt ({resume})")
    assert run(kernel, "%claude plan on") == (
        f"default is closed: cannot turn plan mode on ({resume})")
    assert plan_mode_events(kernel) == events  # nothing was asked
    assert "default: closed" in run(kernel, "%claude status")


def test_a_dead_session_says_so(kernel: Kernel) -> None:
    sid = start_session(kernel)
    pid = int(kernel.eval("plan_widgets.get().cli_pid"))
    os.kill(pid, signal.SIGKILL)
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().status") == "'dead'", 30,
                      "the session to be dead")
    ended = "default has ended (the Claude Code CLI exited: killed by signal 9)"
    resume = f"%claude resume {sid} continues it"
    events = plan_mode_events(kernel)
    assert run(kernel, "%claude interrupt") == f"{ended}: nothing to interrupt ({resume})"
    assert run(kernel, "%claude plan off") == f"{ended}: cannot turn plan mode off ({resume})"
    assert plan_mode_events(kernel) == events
    assert run(kernel, "%claude stop") == (
        "default had already ended (the Claude Code CLI exited: killed by signal 9); "
        f"closed it (id {sid}; {resume})")
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().closed") == "True", 30,
                      "the session to close")
    assert run(kernel, "%claude stop") == f"default is already closed (id {sid}; {resume})"


def test_resume_comes_back_under_its_own_name_and_never_replaces_another(
        kernel: Kernel) -> None:
    kernel.execute("%%claude --session K --scripted chat_context.yaml\nmy name is Ada")
    k_id = kernel.eval("plan_widgets.get('K').session_id").strip("'")
    kernel.execute("%claude stop --session K")
    kernel.execute("%%claude --scripted chat_context.yaml\nhello from default")
    d_id = kernel.eval("plan_widgets.get('default').session_id").strip("'")
    # no --session: K comes back as K; the running default session is untouched
    out = kernel.execute(f"%claude resume {k_id[:8]}")
    assert f"Resumed session {k_id} as 'K'" in out["text"], out["text"]
    assert kernel.eval("plan_widgets.get('default').status") == "'idle'"
    assert kernel.eval("plan_widgets.get('default').session_id").strip("'") == d_id
    # resuming some other conversation under a live session's name is refused, in one line
    kernel.execute("%claude stop --session K")
    kernel.execute("%%claude --session K --new\nanother conversation")
    out = kernel.execute(f"%claude resume {k_id[:8]}", allow_error=True)
    assert "'K' runs another conversation" in out["text"] and "Traceback" not in out["text"]
    assert kernel.eval("plan_widgets.get('K').status") == "'idle'"
