"""The agent's whole conversation end to end: background agents, the turns the CLI starts by
itself, cards between cells, with a real kernel, the real CLI and the scripted model.

Measured facts behind them: docs/conversation.md.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel, process_running, requests_of

pytestmark = pytest.mark.e2e

START = "%%claude --scripted agents_background.yaml\nstart a background agent"


def displays_with(k: Kernel, text: str) -> list[dict[str, Any]]:
    """Every display or display update (any cell) whose content holds ``text``."""
    with k._lock:
        return [m for m in k.messages
                if m["header"]["msg_type"] in ("display_data", "update_display_data")
                and text in json.dumps(m["content"].get("data", {}))]


def cell_text(out: dict[str, Any]) -> str:
    return json.dumps(out["data"]) + out["text"]


def log_events(k: Kernel) -> list[dict[str, Any]]:
    path = k.eval("str(plan_widgets.get().log_path)").strip().strip("'")
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _position(k: Kernel, pred: Any) -> int | None:
    """Where on iopub (the kernel's order of sending) the first message matching ``pred`` came;
    None if none came yet."""
    with k._lock:
        return next((i for i, m in enumerate(k.messages) if pred(m)), None)


def slow_script(workdir: Path, *, agent_delay: float, note_delay: float) -> str:
    """agents_background.yaml with the subagent and the CLI's own turn slowed down."""
    text = (workdir / "agents_background.yaml").read_text()
    text = text.replace("    delay: 1.0\n", f"    delay: {agent_delay}\n", 1)
    text = text.replace("    repeat: true\n    reply:\n      - thinking:",
                        f"    repeat: true\n    delay: {note_delay}\n    reply:\n      - thinking:",
                        1)
    (workdir / "slow_agents.yaml").write_text(text)
    return "slow_agents.yaml"


def test_a_background_agents_card_appears_without_a_new_cell(kernel: Kernel,
                                                            workdir: Path) -> None:
    """The cell returns at once; the agent's Write asks afterwards: its card appears below the
    cell with no new cell run, the decision reaches the agent, and the CLI's own turn when
    the agent ends shows there too, static once done, and in the log."""
    cell = kernel.start(START)
    returned = kernel.wait_until(lambda: _position(kernel, lambda m: (
        m["parent_header"].get("msg_id") == cell and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle")), 120, "the cell to return")
    out = kernel.outputs(cell)
    assert "It runs in the background." in cell_text(out)
    allow = kernel.wait_widget("ButtonModel", description="Allow", timeout=60)
    opened = _position(kernel, lambda m: m["header"]["msg_type"] == "comm_open"
                       and m["content"]["comm_id"] == allow)
    assert opened is not None and opened > returned, "the card came before the cell returned"
    kernel.wait_until(lambda: "↳ Agent &quot;Write a file&quot; asks" in kernel.html_text(), 30,
                      "the card to name the agent")
    # once: the title above the card does not say it again (issue 31)
    assert kernel.wait_until(lambda: displays_with(kernel, "A background agent needs your"), 30)
    assert not displays_with(kernel, 'Write a file\\" asks')
    assert not (workdir / "from_agent.txt").exists()
    kernel.click(allow)
    kernel.wait_until(lambda: (workdir / "from_agent.txt").exists(), 60, "the agent's write")
    kernel.wait_until(lambda: displays_with(kernel, "NOTIFICATION REPLY"), 60,
                      "the CLI's own turn to show below the cell")
    last = kernel.wait_until(
        lambda: [m for m in displays_with(kernel, "NOTIFICATION REPLY")
                 if "application/vnd.jupyter.widget-view+json" not in m["content"]["data"]],
        60, "the self-started turn to become static")[-1]
    assert "It runs in the background." in json.dumps(last["content"]["data"])
    assert "NOTIFICATION REPLY" not in json.dumps(out["data"])
    events = log_events(kernel)
    assert [(e["type"], e.get("origin")) for e in events if e["type"] == "turn:started"] == [
        ("turn:started", "user"), ("turn:started", "agent")]
    assert [e.get("origin") for e in events if e["type"] == "turn:ended"] == [
        None, "task-notification"]
    ended = [e for e in events if e["type"] == "agent:ended"]
    assert ended[0]["status"] == "completed"
    assert "wrote from_agent.txt" in str([e.get("summary") for e in ended])


def test_the_users_turn_is_never_ended_by_another_turn(kernel: Kernel, workdir: Path) -> None:
    """The race: the user's cell runs while the CLI answers a background agent's notification
    by itself. The cell gets its own answer, never the notification's, and ends on its own
    result."""
    script = slow_script(workdir, agent_delay=1.0, note_delay=2.5)
    kernel.execute(f"%%claude --scripted {script} --mode acceptEdits\n"
                   "start a background agent", timeout=120)
    kernel.wait_until(lambda: (workdir / "from_agent.txt").exists(), 60, "the agent's write")
    # the CLI's own turn has asked the model (which answers 2.5 s later): the request log
    kernel.wait_until(lambda: [r for r in requests_of(workdir)
                               if r.get("step") is not None and not r.get("user")
                               and not r.get("tool_result")], 30,
                      "the CLI's own turn to ask the model")
    out = kernel.execute("%%claude\nwhat now", timeout=120)
    assert "ANSWER TO WHAT NOW." in cell_text(out)
    # the CLI's own turn shows below the newest cell, as a block of its own after the
    # cell's turn; the cell's turn holds its own answer only
    last = kernel.wait_until(lambda: displays_with(kernel, "NOTIFICATION REPLY"), 30,
                             "the notification's reply, below the newest cell")[-1]
    plain = last["content"]["data"]["text/plain"]
    mine, _, theirs = plain.partition('claude (session default): Background agent "Write a file"')
    assert "ANSWER TO WHAT NOW." in mine and "NOTIFICATION REPLY" not in mine, plain
    assert "NOTIFICATION REPLY" in theirs and "ANSWER TO WHAT NOW." not in theirs, plain
    events = log_events(kernel)
    # the prompt was sent while the CLI was about to answer the notification (it waited in
    # the CLI): the two turns overlap in the log, and each ends on its own result
    order = [(e["type"], e["turn"], e.get("origin"), e.get("prompt", "")[:20]) for e in events
             if e["type"] in ("turn:started", "turn:ended")]
    assert order == [
        ("turn:started", 1, "user", "start a background a"), ("turn:ended", 1, None, ""),
        ("turn:started", 2, "user", "what now\n"),
        ("turn:started", 3, "agent", 'Background agent "Wr'),
        ("turn:ended", 3, "task-notification", ""), ("turn:ended", 2, None, "")], order


def test_agents_end_when_the_cli_dies_and_the_next_cell_works(kernel: Kernel,
                                                              workdir: Path) -> None:
    script = slow_script(workdir, agent_delay=60, note_delay=0)
    kernel.execute(f"%%claude --scripted {script}\nstart a background agent", timeout=120)
    kernel.wait_until(lambda: kernel.eval("len(plan_widgets.get().running_agents)").strip()
                      == "1", 30, "the agent to run")
    kernel.execute("import os, signal\nos.kill(plan_widgets.get().cli_pid, signal.SIGKILL)")
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().status").strip() == "'dead'",
                      30, "the session to end")
    got = kernel.eval("[(a.status, a.summary) for a in plan_widgets.get().agents]")
    assert got.strip() == "[('stopped', 'stopped: the CLI exited')]", got
    out = kernel.execute("%%claude\nwhat now", timeout=120)
    assert "ANSWER TO WHAT NOW." in cell_text(out)


def test_closing_with_agents_running_stops_them(kernel: Kernel, workdir: Path) -> None:
    script = slow_script(workdir, agent_delay=60, note_delay=0)
    kernel.execute(f"%%claude --scripted {script}\nstart a background agent", timeout=120)
    kernel.wait_until(lambda: kernel.eval("len(plan_widgets.get().running_agents)").strip()
                      == "1", 30, "the agent to run")
    pid = int(kernel.eval("plan_widgets.get().cli_pid"))
    kernel.execute("await plan_widgets.get().close(timeout=20)", timeout=60)
    got = kernel.eval("[(a.status, a.summary) for a in plan_widgets.get().agents]")
    assert got.strip() == "[('stopped', 'stopped: the session was closed')]", got
    kernel.wait_until(lambda: not process_running(pid), 20, "the CLI to exit")


def test_stop_a_background_agent(kernel: Kernel, workdir: Path) -> None:
    script = slow_script(workdir, agent_delay=60, note_delay=0)
    kernel.execute(f"%%claude --scripted {script}\nstart a background agent", timeout=120)
    kernel.wait_until(lambda: kernel.eval("len(plan_widgets.get().running_agents)").strip()
                      == "1", 30, "the agent to run")
    kernel.execute("s = plan_widgets.get()\nawait s.stop_agent(s.running_agents[0].id)")
    kernel.wait_until(lambda: kernel.eval("len(plan_widgets.get().running_agents)").strip()
                      == "0", 30, "the agent to stop")
    status = kernel.eval("plan_widgets.get().agents[0].status").strip()
    assert status in ("'stopped'", "'killed'"), status


def test_plan_mode_refusal_of_agent_is_said_with_the_clis_reason(kernel: Kernel,
                                                                 workdir: Path) -> None:
    (workdir / "plan_agent.yaml").write_text(textwrap.dedent("""\
        steps:
          - when: {user: "delegate"}
            reply:
              - tool: Agent
                input: {description: "Explore", prompt: "look around",
                        subagent_type: "general-purpose"}
          - when: {tool_result: "."}
            reply: [{text: "I could not delegate."}]
    """))
    kernel.execute("%%claude --scripted plan_agent.yaml --plan\ndelegate", timeout=120)
    reason = kernel.wait_until(
        lambda: [m for m in displays_with(kernel, "Agent was not run")], 30,
        "the refusal's reason on the tool line")
    assert reason


def test_a_foreground_subagent_speaks_under_its_agent_line(kernel: Kernel,
                                                            workdir: Path) -> None:
    """A foreground subagent's text (forwarded) and its two tool calls in one response: each
    asks in turn, on a card naming the agent; its text never joins the main reply."""
    msg = kernel.start("%%claude --scripted agents_foreground.yaml\ndelegate in the foreground")
    for name in ("a.txt", "b.txt"):
        allow = kernel.wait_until(lambda: [
            b for b in kernel.find_widgets("ButtonModel", description="Allow")
            if not kernel.widgets[b].get("disabled")], 60, f"the card for {name}")[-1]
        kernel.click(allow)
        kernel.wait_until(lambda n=name: (workdir / n).exists(), 30, f"{name} written")
    kernel.wait_until(lambda: displays_with(kernel, "Main agent: the subagent is done."), 60,
                      "the turn's end")
    got = kernel.eval("[(d.agent, d.input['file_path'].rsplit('/', 1)[1]) "
                      "for d in plan_widgets.get().decisions]")
    assert got.strip() == "[('Two files', 'a.txt'), ('Two files', 'b.txt')]", got
    text = kernel.eval("[e.prompt for e in plan_widgets.get().events "
                       "if e.type == 'turn:started']")
    assert "delegate in the foreground" in text
    static = kernel.wait_until(lambda: [
        m for m in displays_with(kernel, "Main agent: the subagent is done.")
        if "application/vnd.jupyter.widget-view+json" not in m["content"]["data"]], 60,
        "the finished turn's static output")[-1]
    md = static["content"]["data"]["text/markdown"]
    md = md if isinstance(md, str) else "".join(md)
    # the subagent's words sit inside its Agent line's <details>, after the Agent summary
    agent_at = md.index("Two files")
    assert md.index("Foreground subagent reporting.") > agent_at
    assert kernel.outputs(msg)["text"].count("Traceback") == 0
