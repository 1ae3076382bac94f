"""A session's life as a user drives it: replace, re-run, close, options on a live session.

Each test runs a real kernel and the real CLI against the scripted model (see conftest).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e

PLAN = "%%claude --scripted fault_plan.yaml --plan\nPlan the work"


def test_rerunning_a_cell_shows_the_pending_card_again(kernel: Kernel, workdir: Path) -> None:
    kernel.execute(PLAN)
    kernel.wait_widget("ButtonModel", description="Approve")
    # the user re-runs the cell: its old output (the card) is cleared by the frontend
    again = kernel.start(PLAN)
    kernel.wait_until(lambda: "Its card again" in kernel.outputs(again)["text"], 60,
                      "the re-run cell to say a decision is pending")
    auto = "Approve, auto-accept edits"  # (plain Approve would ask before the Write)
    copy = kernel.wait_widget("ButtonModel", description=auto, count=2)
    assert copy != kernel.find_widgets("ButtonModel", description=auto)[0]
    kernel.click(copy)  # the copy decides
    kernel.wait_until(lambda: (workdir / "work.py").exists(), 60, "the approved work")
    assert kernel.eval("[d.outcome.by for d in plan_widgets.get().decisions]") == "['user']"
    approves = kernel.find_widgets("ButtonModel", description="Approve")
    kernel.wait_until(lambda: all(kernel.widgets[b]["disabled"] for b in approves), 30,
                      "both copies of the card to be disabled")


def test_close_ends_the_running_turn(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted fault_slow.yaml --background\nbe slow")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the model request")
    out = kernel.execute(
        "import asyncio\ns = plan_widgets.get()\nt = s.current_turn\nawait s.close(timeout=30)\n"
        "print(t.done, t.error)\nprint(await asyncio.wait_for(t, 5) is t)",
        timeout=60)
    assert "True the session was closed during this turn" in out["text"], out["text"]
    assert "True" in out["text"].splitlines()[-1]
    assert "Traceback" not in out["text"]


def test_wait_returns_when_the_session_dies_while_starting(kernel: Kernel, workdir: Path) -> None:
    (workdir / "broken.yaml").write_text("steps:\n  - fail: {status: 500}\n"
                                         "    reply: [{text: both}]\n")
    out = kernel.execute(
        "import plan_widgets\ns = plan_widgets.session('b', scripted='broken.yaml')\n"
        "print(await s.wait(timeout=60))", timeout=90)
    assert out["text"].strip().splitlines()[-1] == "dead", out["text"]


def test_new_keeps_the_session_options_and_checks_them_first(kernel: Kernel,
                                                             workdir: Path) -> None:
    (workdir / "sub").mkdir()
    kernel.execute("%%claude --session A --scripted chat_context.yaml --mode acceptEdits "
                   "--cwd sub\nhello")
    first = kernel.eval("plan_widgets.get('A').session_id")
    # a typo in the --new cell: one line, and the running session is untouched
    out = kernel.execute("%%claude --session A --new --cwd /no/such/dir\nhello", allow_error=True)
    assert "is not a directory" in out["text"] and "Traceback" not in out["text"]
    assert kernel.eval("plan_widgets.get('A').status") == "'idle'"
    assert kernel.eval("plan_widgets.get('A').session_id") == first
    # --new alone: a new conversation with the same folder, mode and script
    kernel.execute("%%claude --session A --new\nhello again")
    assert kernel.eval("plan_widgets.get('A').session_id") != first
    assert kernel.eval("plan_widgets.get('A').options.cwd") == repr(str(workdir / "sub"))
    assert kernel.eval("plan_widgets.get('A').mode") == "'acceptEdits'"
    assert kernel.eval("plan_widgets.get('A').options.scripted.endswith('chat_context.yaml')") \
        == "True"


def test_one_conversation_is_never_run_by_two_sessions(kernel: Kernel) -> None:
    kernel.execute("%%claude --session H --scripted chat_context.yaml\nhello")
    sid = kernel.eval("plan_widgets.get('H').session_id").strip("'")
    out = kernel.execute(f"%%claude --resume {sid[:8]}\nhello twice", allow_error=True)
    assert "is running in this kernel as 'H'" in out["text"], out["text"]
    assert kernel.eval("plan_widgets.get('default') is None") == "True"
    out = kernel.execute(f"plan_widgets.session('other', resume={sid!r})", allow_error=True)
    assert "running in this kernel as 'H'" in out["text"]


def test_mode_option_in_plan_mode_sets_where_approval_leads(kernel: Kernel,
                                                            workdir: Path) -> None:
    kernel.execute(PLAN)
    kernel.wait_widget("ButtonModel", description="Approve")
    kernel.execute("%%claude --mode acceptEdits --background\nafter the plan")
    # still in plan mode, the plan still waits; the resting mode is what the cell said
    assert kernel.eval("plan_widgets.get().mode") == "'plan'"
    assert kernel.eval("plan_widgets.get().pending.kind") == "'plan'"
    assert kernel.eval("plan_widgets.get().options.mode") == "'acceptEdits'"
    assert not (workdir / "work.py").exists()


def test_bad_values_on_a_live_session_are_one_line(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted chat_context.yaml\nhello")
    for bad in ("-5", "nan", "inf"):
        out = kernel.execute(f"%%claude --approval-timeout {bad}\nhello", allow_error=True)
        assert "positive number of seconds" in out["text"], (bad, out["text"])
        assert "Traceback" not in out["text"]
    assert kernel.eval("plan_widgets.get().options.approval_timeout") == "1800.0"
    out = kernel.execute("await plan_widgets.get().set_mode('yolo')", allow_error=True)
    assert "unknown mode 'yolo'" in out["text"]
    assert kernel.eval("plan_widgets.get().plan_in_force") == "False"


def test_closing_line_shows_the_turns_cost_and_the_sessions(kernel: Kernel) -> None:
    for i in range(2):
        kernel.execute(f"%%claude --scripted chat_context.yaml\nhello {i}")
    shown = html.unescape(kernel.html_text())  # as the page shows it ($ as &#36; in the HTML)
    found = re.findall(r"\$(\d+\.\d+) \(session \$(\d+\.\d+)\)", shown)
    assert len(found) >= 2, shown
    (turn1, total1), (turn2, total2) = [(float(a), float(b)) for a, b in found[-2:]]
    assert turn1 == total1 > 0  # the first turn is the whole session so far
    assert 0 < turn2 < total2 and abs(turn2 - (total2 - total1)) <= 0.00011
