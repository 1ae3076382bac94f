"""Issue 4 end to end: faults end every wait honestly, and the kernel stays usable.

The CLI killed mid-turn, the model API failing (HTTP 429/500/529, a stream cut off, a
connection refused), and Run All with several ``%%claude`` cells. A real kernel, the real CLI,
the scripted model (which sets CLAUDE_CODE_MAX_RETRIES=0, so failures surface at once).
"""

from __future__ import annotations

import os
import re
import signal
import socket
from pathlib import Path

import pytest
from kernel import Kernel, error_lines, process_running, requests_of

pytestmark = pytest.mark.e2e


def card_status_text(k: Kernel) -> str:
    with k._lock:
        return "\n".join(re.sub(r"<[^>]+>", "", str(s.get("value", "")))
                         for s in k.widgets.values()
                         if s.get("_model_name") == "HTMLModel"
                         and 'class="pw-status' in str(s.get("value", "")))


def last_bundle_text(k: Kernel, msg_id: str) -> str:
    """The text/plain of the newest display (or update) of one cell."""
    data = [d for d in k.outputs(msg_id)["data"] if "text/plain" in d]
    return data[-1]["text/plain"] if data else ""


def idle(k: Kernel, msg_id: str) -> bool:
    return any(m["parent_header"].get("msg_id") == msg_id
               and m["header"]["msg_type"] == "status"
               and m["content"]["execution_state"] == "idle" for m in k.messages)


# -- the CLI dies mid-turn -------------------------------------------------------------------
def _children(pid: int) -> dict[int, list[str]]:
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out[int(p)] = argv
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_cli_killed_mid_turn(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted fault_plan.yaml --plan\nPlan the work")
    kernel.wait_widget("ButtonModel", description="Approve")
    old_id = kernel.eval("plan_widgets.get().session_id").strip("'")
    # the session's CLI: a child process of the kernel running the bundled `claude`
    kernel_pid = int(kernel.eval("__import__('os').getpid()"))
    pid = int(kernel.eval("plan_widgets.get().cli_pid"))
    argv = _children(kernel_pid).get(pid)
    assert argv and Path(argv[0]).name == "claude", argv
    os.kill(pid, signal.SIGKILL)
    # the pending card expires, the cell says what happened, the session is marked dead
    kernel.wait_until(lambda: "Expired" in card_status_text(kernel), 30, "the card to expire")
    assert "the Claude Code CLI exited" in card_status_text(kernel)
    kernel.wait_until(lambda: [e for e in error_lines(kernel) if "The session ended" in e], 30,
                      "the cell to show the end")
    assert all(kernel.widgets[c].get("disabled")
               for c in kernel.find_widgets("ButtonModel", description="Approve"))
    assert kernel.eval("plan_widgets.get().dead is not None") == "True"
    status = kernel.execute("%claude status")["text"]
    assert "default: dead" in status and "killed by signal 9" in status, status
    assert not (workdir / "work.py").exists()
    assert kernel.eval("1 + 1") == "2"
    # the next %%claude starts a fresh session and offers to resume the old one
    out = kernel.execute("%%claude\nhello after the crash")
    assert "Starting a new one" in out["text"]
    assert f"%claude resume {old_id}" in out["text"]
    kernel.wait_until(lambda: any("Reply to: hello after the crash" in m
                                  for m in kernel.markdown_outputs()), 30, "the fresh reply")
    assert kernel.eval("plan_widgets.get().session_id").strip("'") != old_id


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_cli_killed_while_the_cell_waits(kernel: Kernel, workdir: Path) -> None:
    cell = kernel.start("%%claude --scripted fault_slow.yaml\nbe slow")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the model request")
    kernel_pid = kernel.km.provisioner.process.pid  # type: ignore[union-attr]
    clis = [p for p, argv in _children(kernel_pid).items()
            if argv and Path(argv[0]).name == "claude"]
    assert len(clis) == 1, clis
    os.kill(clis[0], signal.SIGKILL)
    # the waiting cell ends by itself and says what happened, in one line
    kernel.wait_until(lambda: idle(kernel, cell), 30, "the cell to end")
    assert "Traceback" not in kernel.outputs(cell)["text"]
    ended = [e for e in error_lines(kernel) if e.startswith("The session ended:")]
    assert ended == ["The session ended: the Claude Code CLI exited: killed by signal 9"], ended
    assert "killed by signal 9" in last_bundle_text(kernel, cell)
    assert kernel.eval("1 + 1") == "2"
    out = kernel.execute("%%claude\nhello after the crash")
    assert "Starting a new one" in out["text"] and "%claude resume" in out["text"]


# -- the model API fails ---------------------------------------------------------------------
@pytest.mark.parametrize(("script", "expected"), [
    ("fault_429.yaml", "The model API failed: HTTP 429 (rate limited)"),
    ("fault_500.yaml", "The model API failed: HTTP 500 (server error)"),
    ("fault_529.yaml", "The model API failed: HTTP 529 (overloaded)"),
    ("fault_cut.yaml", "The model API failed: the response stream was cut off halfway."),
])
def test_api_fault_is_one_clear_line(kernel: Kernel, workdir: Path, script: str,
                                     expected: str) -> None:
    cell = kernel.start(f"%%claude --scripted {script}\nplease trigger it")
    kernel.wait_until(lambda: idle(kernel, cell), 120, "the cell")
    assert "Traceback" not in kernel.outputs(cell)["text"]
    errors = kernel.wait_until(lambda: error_lines(kernel), 30, "an error line")
    assert len(errors) == 1, errors
    assert errors[0].startswith(expected), errors
    assert "\n" not in errors[0] and len(errors[0]) <= 300
    # the static fallback of the cell (frontends without widgets) says it too
    assert expected in last_bundle_text(kernel, cell)
    # said once: the CLI's own "API Error: ..." message is not shown as the agent's words
    assert not any("API Error" in m for m in kernel.markdown_outputs())
    assert kernel.eval("1 + 1") == "2"
    # the session is still usable: the next prompt gets its answer
    kernel.execute("%%claude\nsecond prompt")
    kernel.wait_until(lambda: any("Recovered" in m for m in kernel.markdown_outputs()), 30,
                      "the next reply")
    assert kernel.eval("plan_widgets.get().status") == "'idle'"


def test_broken_script_is_one_clear_line(kernel: Kernel, workdir: Path) -> None:
    # (a status answer has no reply; a cut may have one: the part it streams)
    (workdir / "fault_broken.yaml").write_text("steps:\n  - fail: {status: 500}\n"
                                               "    reply: [{text: both}]\n")
    cell = kernel.start("%%claude --scripted fault_broken.yaml\nhello")
    kernel.wait_until(lambda: idle(kernel, cell), 120, "the cell")
    assert "Traceback" not in kernel.outputs(cell)["text"]
    shown = kernel.wait_until(lambda: [e for e in error_lines(kernel) if "fault_broken" in e], 30,
                              "the error line")
    assert "the scripted model cannot start" in shown[0], shown
    assert "exactly one of reply or fail" in shown[0], shown
    assert kernel.eval("1 + 1") == "2"


_HELD: list[socket.socket] = []


def _dead_port() -> int:
    """A port on 127.0.0.1 that refuses connections: bound and never listening, and held
    (never closed) so that no other test running in parallel can take it meanwhile."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return int(s.getsockname()[1])


def test_connection_refused_is_one_clear_line(kernel: Kernel) -> None:
    port = _dead_port()
    kernel.execute(
        "s = plan_widgets.session('offline', env={"
        f"'ANTHROPIC_BASE_URL': 'http://127.0.0.1:{port}', 'ANTHROPIC_API_KEY': 'sk-test', "
        "'CLAUDE_CODE_MAX_RETRIES': '0', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC': '1'})")
    out = kernel.execute("%%claude --session offline\nhello", allow_error=True)
    assert out["text"].strip() == ("TurnError: the turn ended in an error: The model API could "
                                   "not be reached: connection refused.")  # the cell fails
    errors = kernel.wait_until(lambda: error_lines(kernel), 30, "an error line")
    assert errors == ["The model API could not be reached: connection refused."], errors
    assert kernel.eval("1 + 1") == "2"
    assert kernel.eval("plan_widgets.get('offline').status") == "'idle'"


def test_scripted_model_gone_is_one_clear_line(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted fault_order.yaml\nfirst prompt")
    kernel.execute("await plan_widgets.get().lifecycle.scripted.astop()")
    out = kernel.execute("%%claude\nsecond prompt", allow_error=True)
    assert out["reply"]["ename"] == "TurnError" and "Traceback" not in out["text"]
    errors = kernel.wait_until(lambda: error_lines(kernel), 30, "an error line")
    assert errors == ["The model API could not be reached: connection refused."], errors
    assert kernel.eval("1 + 1") == "2"


# -- Run All ---------------------------------------------------------------------------------
def test_run_all_runs_cells_in_order(kernel: Kernel, workdir: Path) -> None:
    cells = [kernel.start("%%claude --scripted fault_order.yaml\nprompt number 0")]
    cells += [kernel.start(f"%%claude\nprompt number {i}") for i in (1, 2, 3)]
    last = kernel.start("print(1 + 1)")
    kernel.wait_until(lambda: idle(kernel, last), 120, "the last cell")
    assert kernel.outputs(last)["text"].strip() == "2"
    users = [r["user"] for r in requests_of(workdir)]
    assert users == [f"prompt number {i}" for i in range(4)], users
    # each cell shows its own reply
    for i, c in enumerate(cells):
        assert f"Reply to prompt number {i}." in last_bundle_text(kernel, c), i


def test_run_all_with_a_pending_decision_waits_for_it(kernel: Kernel, workdir: Path) -> None:
    """Run All with a card in the first cell: the cells below wait for the decision (a click
    reaches the busy kernel: ipykernel 7.4 hands a widget message on the main shell to the
    comm at once), then run in order, the queued prompt after the approved work."""
    first = kernel.start("%%claude --scripted fault_plan.yaml --plan\nPlan the work")
    second = kernel.start("%%claude\nsecond prompt")
    third = kernel.start("print(1 + 1)")
    approve = kernel.wait_widget("ButtonModel", description="Approve, auto-accept edits")
    assert not idle(kernel, first) and not kernel.outputs(third)["text"]
    kernel.click(approve)  # on the main shell, while the first cell is busy
    kernel.wait_until(lambda: idle(kernel, third), 120, "the cells after the decided one")
    assert kernel.outputs(third)["text"].strip() == "2"
    assert "A decision is pending" not in kernel.outputs(second)["text"]
    assert (workdir / "work.py").exists()
    users = [r["user"] for r in requests_of(workdir) if r["user"]]
    assert users[-1] == "second prompt"
    assert "Reply to: second prompt" in last_bundle_text(kernel, second)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_cli_that_stops_answering_is_declared_dead(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted fault_slow.yaml --background\nbe slow")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the model request")
    pid = int(kernel.eval("plan_widgets.get().cli_pid"))
    os.kill(pid, signal.SIGSTOP)  # hung: alive, but it answers nothing, not even an interrupt
    try:
        kernel.execute("%claude interrupt")
        # the interrupt's control request times out (15 s): the session ends, the turn with it
        kernel.wait_until(lambda: [e for e in error_lines(kernel)
                                   if "stopped answering" in e], 40, "the turn to end")
        assert kernel.eval("plan_widgets.get().status") == "'dead'"
        assert kernel.eval("1 + 1") == "2"
    finally:
        os.kill(pid, signal.SIGCONT)
    kernel.wait_until(lambda: not process_running(pid), 30, "the hung CLI to be gone")
    out = kernel.execute("%%claude\nhello after the hang")
    assert "Starting a new one" in out["text"] and "%claude resume" in out["text"]
