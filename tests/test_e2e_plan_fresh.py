"""Issue 22, point 1, end to end: Approve, start fresh. The plan becomes the first message of a
new conversation (the CLI's /clear, then the plan), the context meter drops, the log records
the handoff, and both conversations are listed and can be resumed. The real CLI, a real
kernel, the scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e


def _events(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _plain(k: Kernel) -> list[str]:
    """The text/plain of every display and update: what a notebook saved without widgets
    shows."""
    with k._lock:
        return [str(m["content"].get("data", {}).get("text/plain", "")) for m in k.messages
                if m["header"]["msg_type"] in ("display_data", "update_display_data")]


def _close(k: Kernel) -> None:
    k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
              allow_error=True)
    k.shutdown()


def test_approve_start_fresh_runs_the_plan_in_a_new_conversation(workdir: Path) -> None:
    # a large file the planning turn reads: the planning context fills with it
    (workdir / "explore.txt").write_text(
        "".join(f"EXPLORE-7731 line {i}: notes the agent gathered while planning\n"
                for i in range(1200)), encoding="utf-8")
    (workdir / "explore2.txt").write_text(
        "".join(f"EXPLORE-7731 more {i}: what the agent read next, to be sure of the plan\n"
                for i in range(1200)), encoding="utf-8")
    k = Kernel(workdir)
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        out = k.execute("%%claude --scripted plan_fresh.yaml --plan --mode acceptEdits\n"
                        "Plan a greeting")
        assert "paused for your decision (plan)" in out["shown"], out
        # while the plan waits, the bar already shows how full the planning context is
        assert k.wait_until(lambda: re.search(r"<b>ctx \d+%</b>", k.html_text()), 20)
        k.execute("s = plan_widgets.get()\nbefore = await s.context_usage()")
        before = int(k.eval("before.total_tokens"))
        old_id = k.eval("s.session_id").strip("'")
        k.click(k.wait_widget("ButtonModel", description="Approve, start fresh"))
        assert k.wait_until(lambda: (workdir / "hello.py").exists(), 60)
        assert k.execute("print(await s.wait(60))")["text"].strip() == "idle"
        # the card says how it was approved (its static copy, once the cell's turn ended)
        assert k.wait_until(lambda: "started fresh: the plan runs in a new conversation"
                            in json.dumps([m["content"] for m in list(k.messages)]), 20)
        # the plan's turn shows below the newest cell, and goes static when it ends
        assert k.wait_until(lambda: any(
            "Start fresh: the approved plan" in t and "Done: `hello.py` written." in t
            for t in _plain(k)), 20)
        # the planning turn handed its plan over: no red "Interrupted.", no ✗ (issue 31, 3)
        ended = " ".join(_plain(k)) + k.html_text()
        assert "✓ handed its plan over to a new conversation" in ended, ended[-3000:]
        assert "Interrupted." not in ended and "✗" not in ended, ended[-3000:]
        # the note says where the plan runs: below (here, in this very cell; issue 42, 11)
        assert "the plan runs in a new conversation, shown below" in ended, ended[-3000:]
        assert "below the newest cell" not in ended, ended[-3000:]
        # the session keeps its name and goes on under the new conversation's id
        new_id = k.eval("s.session_id").strip("'")
        assert new_id != old_id and k.eval("s.name") == "'default'"
        assert k.eval("s.mode") == "'acceptEdits'"
        # the new conversation's first message was the plan, with nothing of the planning
        first = next(r for r in requests_of(workdir)
                     if "Implement the following plan:" in r["user"])
        assert "# Plan: greet" in first["user"] and first["step"] == 4  # no EXPLORE-7731
        # the context meter shows the drop, in the control bar too
        after = int(k.eval("s.context.total_tokens"))
        assert after < before / 2, (before, after)
        label = k.eval("s.context.label").strip("'")
        # the bar shows the drop: ctx 10% → 3% (the planning conversation's peak, then now)
        assert label.startswith(k.eval("before.label").strip("'") + " → "), label
        assert k.wait_until(lambda: label in k.html_text(), 10)
        # turns are numbered as the person saw them: planning (1), the plan's (2); /clear
        # is none of them, in the Rewind button, the files line and the log
        assert k.find_widgets("ButtonModel", description="Rewind files (turn 2)")
        assert any("%claude rewind 2" in t for t in _plain(k))
        assert k.eval("[e.turn for e in s.events if e.type == 'turn:started']") == "[1, 2]"
        # the log: the old conversation's ends with the handoff, the new one begins with it
        logs = workdir / ".plan_widgets" / "sessions"
        old_log, new_log = _events(logs / f"{old_id}.jsonl"), _events(logs / f"{new_id}.jsonl")
        handoff = [e for e in old_log if e["type"] == "plan:handoff"]
        assert len(handoff) == 1 and handoff[0]["old_id"] == old_id
        assert handoff[0]["new_id"] == new_id and "# Plan: greet" in str(handoff[0]["plan"])
        assert [e["type"] for e in new_log[:2]] == ["session:started", "plan:handoff"]
        ended = [e for e in old_log if e["type"] == "turn:ended"]  # no /clear turn logged
        assert [(e["turn"], e["is_error"], e["message"]) for e in ended] == [
            (1, False, "handed its plan over to a new conversation")]
        assert any(e["type"] == "turn:ended" for e in new_log)  # the plan's turn is logged there
        # %claude sessions (and history) lists both, each naming the other
        for command in ("sessions", "history"):
            out = k.execute(f"%claude {command}")
            table = next(d["text/plain"] for d in out["data"] if "text/plain" in d)
            assert old_id[:8] in table and new_id[:8] in table
            assert f"started fresh from {old_id[:8]}" in table, table
            assert f"went on in {new_id[:8]}" in table, table
    finally:
        _close(k)
    # after a restart, %claude resume of either works, each with its own conversation
    for sid, says in ((new_id, "the fresh conversation"), (old_id, "the planning conversation")):
        k = Kernel(workdir)
        try:
            k.execute("%load_ext plan_widgets\nimport plan_widgets")
            k.execute(f"%claude resume {sid[:8]}")
            out = k.execute("%%claude\nWhich conversation is this?")  # returns at the turn's end
            shown = " ".join(k.markdown_outputs()) + json.dumps(out["data"]) + out["text"]
            assert says in shown, shown[-2000:]
        finally:
            _close(k)
