"""Issue 32 end to end: a bad day is shown while it happens, and nothing is shown twice.

The real CLI (retries on: the script's ``retries``) against the scripted model answering 529
three times, cutting a stream halfway, failing every retry; ``/compact`` and ``%claude
compact``; a real kernel over the Jupyter protocol. Each point is checked in the live
widgets, the static output a saved notebook keeps, and the event log.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e

REPLY = "The first half of the reply, then the second half of it."
HALF = "The first half of the reply,"


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def visible(k: Kernel) -> str:
    """What the newest turn view shows now: the text of its widget tree (Markdown outputs and
    HTML widgets reachable from its children), as a page would render it."""
    with k._lock:
        turns = [c for c in k.widget_order
                 if "pw-turn" in (k.widgets[c].get("_dom_classes") or ())]
        if not turns:
            return ""
        out: list[str] = []

        def walk(cid: str) -> None:
            s = k.widgets.get(cid, {})
            for o in s.get("outputs", []) or []:
                out.append(_plain(o.get("data", {}).get("text/markdown", "")))
            if s.get("_model_name") == "HTMLModel":
                out.append(_plain(str(s.get("value", ""))))
            for child in s.get("children", []) or []:
                walk(str(child).removeprefix("IPY_MODEL_"))

        walk(turns[-1])
        return "\n".join(out)


def idle(k: Kernel, msg_id: str) -> bool:
    return any(m["parent_header"].get("msg_id") == msg_id
               and m["header"]["msg_type"] == "status"
               and m["content"]["execution_state"] == "idle" for m in k.messages)


def static_markdown(k: Kernel, msg_id: str) -> str:
    """The cell's turn as a saved notebook keeps it (its newest display or update)."""
    data = [d for d in k.outputs(msg_id)["data"] if "text/markdown" in d]
    return data[-1]["text/markdown"] if data else ""


def events(k: Kernel, kind: str, name: str = "default") -> list[dict[str, Any]]:
    path = Path(k.eval(f"str(plan_widgets.get({name!r}).log_path)").strip("'"))
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [e for e in lines if e["type"] == kind]


def finish(k: Kernel, cell: str, timeout: float = 90) -> str:
    k.wait_until(lambda: idle(k, cell), timeout, "the cell")
    k.wait_until(lambda: 'pw-static' in static_markdown(k, cell), 30, "the static turn")
    return static_markdown(k, cell)


def test_overloaded_three_times_then_recovers(kernel: Kernel) -> None:
    cell = kernel.start("%%claude --scripted badday_retry.yaml\nAre you overloaded?")
    # while it waits: one line, updated in place, with the reason, the attempt and a countdown
    live = kernel.wait_until(lambda: re.search(
        r"API overloaded · retrying (in \d+ s|now) · attempt \d of 4", visible(kernel)), 60,
        "the retry line")
    assert live
    bar = kernel.wait_until(lambda: re.search(r"retrying \d/4…", kernel.html_text()), 30,
                            "the bar's retry state")
    assert bar
    kernel.wait_until(lambda: "attempt 3 of 4" in visible(kernel), 30, "the third attempt")
    md = finish(kernel, cell)
    # gone when the stream resumed; one quiet line stays in the finished turn
    assert "retrying in" not in md and "retrying now" not in md
    assert re.search(r"retried 3 times: API overloaded, \d+ s", md), md
    assert md.count(HALF) == 1 and "then the second half of it." in md
    retries = events(kernel, "api:retry")
    assert [(e["attempt"], e["status"], e["reason"]) for e in retries] == [
        (1, 529, "API overloaded"), (2, 529, "API overloaded"), (3, 529, "API overloaded")]
    assert kernel.eval("plan_widgets.get().status") == "'idle'"


def test_a_cut_stream_shows_the_reply_once(kernel: Kernel) -> None:
    cell = kernel.start("%%claude --scripted badday_retry.yaml\nPlease cut it")
    # the first half streams, the stream breaks, the CLI sends the whole reply again
    kernel.wait_until(lambda: HALF in visible(kernel), 60, "the first half")
    md = finish(kernel, cell)
    shown = visible(kernel)  # the live view as it was when the turn ended
    assert shown.count(HALF) == 1, shown
    assert "then the second half of it." in shown
    assert md.count(HALF) == 1, md  # the saved notebook
    assert re.search(r"retried 1 time: no response", md), md
    [retry] = events(kernel, "api:retry")
    assert retry["status"] is None and retry["reason"] == "no response"


def test_a_cut_after_thinking_or_in_a_tool_call_leaves_nothing_twice(kernel: Kernel,
                                                                     workdir: Path) -> None:
    # measured: a cut after a finished block is retried with no api_retry; the new
    # message_start alone says that the broken message goes
    cell = kernel.start("%%claude --scripted badday_retry.yaml --mode acceptEdits\n"
                        "please think first")
    md = finish(kernel, cell)
    assert md.count("Thinking…") == 1, md
    assert md.count("Thought, then written: the answer, once.") == 1, md
    assert md.count("Thought, t") == 1, md
    assert visible(kernel).count("Thinking…") == 1
    assert len(events(kernel, "turn:thinking")) == 1  # the log: the thought once
    cell = kernel.start("%%claude\nplease write a file")
    md = finish(kernel, cell)
    assert md.count("Writing the file.") == 1, md
    assert md.count("cut.txt") >= 1 and md.count(" Write</code>") == 1, md
    assert "The file is written." in md
    assert (workdir / "cut.txt").read_text() == "written once"


def test_retries_that_never_succeed_end_the_turn_in_one_line(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted badday_retry.yaml\nhello")
    cell = kernel.start("%%claude\nthis will never work")
    md = finish(kernel, cell, 120)
    assert "retrying in" not in md and "retrying now" not in md
    assert re.search(r"retried 4 times: API overloaded", md), md
    assert "overloaded" in md.split("retried 4 times")[1].lower()  # the CLI's last error
    assert len(events(kernel, "api:retry")) == 4
    assert events(kernel, "turn:ended")[-1]["is_error"] is True
    # the session stays usable
    after = kernel.start("%%claude\nand now?")
    md = finish(kernel, after)  # (the CLI sends both prompts: the failed one had no answer)
    assert "Recovered. You said: " in md and "and now?" in md, md


def test_interrupt_during_a_retry_wait_ends_the_turn_at_once(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted badday_retry.yaml\nhello")
    cell = kernel.start("%%claude\nwait long please")
    kernel.wait_until(lambda: "attempt 1 of 4" in visible(kernel), 60, "the retry line")
    started = time.monotonic()
    # the bar's Interrupt button, clicked while the cell waits (as in a page)
    button = kernel.find_widgets("ButtonModel", description="Interrupt")[-1]
    kernel.click(button)
    md = finish(kernel, cell, 60)
    waited = time.monotonic() - started
    assert waited < 25, waited  # far less than the 30 s retry-after (no timing target)
    assert "retrying in" not in md
    assert "retried 1 time: API overloaded" in md
    assert "✗" in md and "interrupt" in md.lower(), md  # ended, and says why
    assert kernel.eval("plan_widgets.get().status") == "'idle'"


def test_compact_is_a_visible_boundary(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted badday_compact.yaml\nhello")
    cell = kernel.start("%%claude\n/compact keep the greeting")
    md = finish(kernel, cell)
    assert re.search(r"conversation compacted: [\d,k]+ → [\d,k]+ tokens, manual", md), md
    [boundary] = events(kernel, "context:compacted")
    assert boundary["trigger"] == "manual" and boundary["pre_tokens"] > 0
    said = kernel.execute("%claude context")["text"]
    assert re.search(r"last compacted \d+ s ago, in turn 2: conversation compacted", said), said
    # the magic does the same, with its instructions; the turn shows in its cell
    kernel.execute("%%claude\nmore talk")
    line = kernel.start("%claude compact focus on the greeting")
    kernel.wait_until(lambda: len(events(kernel, "context:compacted")) == 2, 60, "a compaction")
    kernel.wait_until(lambda: "conversation compacted" in static_markdown(kernel, line), 30,
                      "the compaction line in the %claude compact cell")
    summary = [r for r in _requests(kernel) if "focus on the greeting" in r["user"]]
    assert summary, "the instructions reach the summary request"
    # nothing to compact (the CLI says so twice: a status and a synthetic reply): its line,
    # once, and no compaction
    again = kernel.start("%%claude\n/compact")
    md = finish(kernel, again)
    assert md.count("Not enough messages to compact") == 1, md
    assert len(events(kernel, "context:compacted")) == 2


def _requests(k: Kernel) -> list[dict[str, Any]]:
    from kernel import requests_of

    return requests_of(k.cwd)


def test_a_model_fallback_is_said_and_the_marker_follows(kernel: Kernel) -> None:
    cell = kernel.start("%%claude --scripted badday_fallback.yaml --model claude-opus-5-5 "
                        "--fallback-model claude-sonnet-4-5\nhello")
    md = finish(kernel, cell)
    assert "model fallback: claude-sonnet-4-5 answers instead of claude-opus-5-5" in md, md
    assert "The fallback model answers." in md
    assert "model <b>claude-sonnet-4-5</b>" in kernel.html_text()  # the bar's marker
    [fb] = events(kernel, "model:fallback")
    assert (fb["to_model"], fb["from_model"]) == ("claude-sonnet-4-5", "claude-opus-5-5")
    # a live session cannot change it (the CLI takes it when it starts): one line
    out = kernel.execute("%%claude --fallback-model claude-haiku-4-5\nagain", allow_error=True)
    assert out["reply"]["status"] == "error"
    assert "runs with fallback_model='claude-sonnet-4-5'" in out["text"], out["text"]
    assert "add --new" in out["text"]


def test_a_failed_mcp_server_is_named(kernel: Kernel, workdir: Path) -> None:
    (workdir / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"teamdb": {"command": "teamdb-does-not-exist", "args": []}}}))
    (workdir / ".claude").mkdir(exist_ok=True)
    (workdir / ".claude" / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True}))
    kernel.execute("%%claude --scripted badday_compact.yaml\nhello")
    # the bar: one short marker, the error in its tooltip (asked of get_mcp_status)
    kernel.wait_until(lambda: "MCP ✗" in kernel.html_text() and "Executable not found"
                      in kernel.html_text(), 30, "the MCP marker with its error")
    status = kernel.execute("%claude status")["text"]
    assert "MCP servers in trouble: teamdb failed (Executable not found" in status, status
    listed = kernel.execute("%claude mcp")["text"]
    assert re.search(r"teamdb: failed — Executable not found in \$PATH", listed), listed
    changes = events(kernel, "mcp:status")
    assert [c["status"] for c in changes if c["name"] == "teamdb"][:1] == ["failed"]
    assert any(c["error"] for c in changes if c["name"] == "teamdb")


def test_auto_compaction_is_a_line_in_the_turn_where_it_happened(kernel: Kernel) -> None:
    kernel.execute("%%claude --scripted badday_compact.yaml\nplease fill the context")
    cell = kernel.start("%%claude\nwhat now?")
    md = finish(kernel, cell)
    assert re.search(r"conversation compacted: 995k → [\d,k]+ tokens, auto", md), md
    assert md.index("conversation compacted") < md.index("Hello there.")  # where it happened
    [boundary] = events(kernel, "context:compacted")
    assert boundary["trigger"] == "auto" and boundary["turn"] == 2
    # the meter was read again: not the full context of the turn before
    kernel.wait_until(lambda: "ctx" in kernel.html_text(), 30, "the context meter")
    assert kernel.eval("plan_widgets.get().context.turn") == "2"
