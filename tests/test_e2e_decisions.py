"""Issue 4 end to end: every decision is a card, and every pending decision ends.

A real kernel over the Jupyter protocol, the real CLI bundled with the SDK, the scripted model on
127.0.0.1. Clicks and field edits are sent as a frontend sends them (comm messages). What the
model received is read back from the scripted model's request log.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from kernel import Kernel, process_running, requests_of

pytestmark = pytest.mark.e2e

COLOR_Q = "Which color should the banner use?"
SIZES_Q = "Which sizes should be generated?"


# -- helpers ---------------------------------------------------------------------------------
def tool_results(workdir: Path) -> str:
    """Every tool result the model received, joined."""
    return "\n".join(r.get("tool_result") or "" for r in requests_of(workdir))


def card_status(k: Kernel, kind: str) -> str:
    """The status line of the newest card of ``kind`` (plan, question, tool), as plain text."""
    import re

    with k._lock:
        for cid in reversed(k.widget_order):
            s = k.widgets.get(cid, {})
            if s.get("_model_name") in ("BoxModel", "VBoxModel") and f"pw-card-{kind}" in s.get(
                "_dom_classes", []
            ):
                status_ref = s["children"][-1]
                status = k.widgets.get(status_ref.removeprefix("IPY_MODEL_"), {})
                return re.sub(r"<[^>]+>", "", str(status.get("value", "")))
    return ""


def wait_status(k: Kernel, kind: str, *words: str, timeout: float = 30) -> str:
    """Wait until the newest ``kind`` card's status line has every word; returns it."""
    return k.wait_until(
        lambda: (lambda t: t if all(w in t for w in words) else None)(card_status(k, kind)),
        timeout, f"{kind} card status with {words} (now {card_status(k, kind)!r})",
    )


def buttons(k: Kernel, *descriptions: str) -> list[str]:
    return [c for d in descriptions for c in k.find_widgets("ButtonModel", description=d)]


def all_disabled(k: Kernel, ids: list[str], timeout: float = 10) -> bool:
    assert ids
    return k.wait_until(lambda: all(k.widgets[c].get("disabled") for c in ids), timeout,
                        "card controls disabled")


def cell_ended(k: Kernel, cell: str) -> None:
    """Wait (bounded) for ``cell`` to end: the stop button fails a waiting cell, and what is
    sent while a cell fails is aborted by the kernel."""
    k.wait_until(lambda: any(
        m["parent_header"].get("msg_id") == cell and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle" for m in k.messages), 30, "the cell's end")


def settle(k: Kernel, timeout: float = 30) -> str:
    """Wait (bounded, in the kernel) until the default session is idle or waits for the user."""
    out = k.execute(f"print(await plan_widgets.get().wait({timeout}))", timeout=timeout + 30)
    return out["text"].strip()


def start_plan(k: Kernel, extra: str = "") -> dict:
    """A --plan turn of dec_plan.yaml; returns once the plan card waits for the user."""
    out = k.execute(f"%%claude --scripted dec_plan.yaml --plan {extra}\nPlan the work")
    k.wait_widget("ButtonModel", description="Approve")
    assert k.eval("plan_widgets.get().pending.kind") == "'plan'"
    return out


def assert_usable_after(k: Kernel, workdir: Path) -> None:
    """The session takes the next turn, and nothing of the plan ran."""
    out = k.execute("%%claude\nhello again", timeout=90)
    assert "Traceback" not in out["text"]
    k.wait_until(lambda: any("Hello again to you!" in m for m in k.markdown_outputs()), 30,
                 "the next turn's reply")
    assert not (workdir / "work.py").exists()


# -- questions -------------------------------------------------------------------------------
def option_boxes(kernel: Kernel) -> tuple[str, list[str]]:
    """dec_question.yaml's options: the single choice's radio buttons (one widget), the
    multi-select's three checkboxes."""
    radios = kernel.find_widgets("RadioButtonsModel")
    boxes = kernel.find_widgets("CheckboxModel")
    assert len(radios) == 1 and len(boxes) == 3, (radios, boxes)
    return radios[0], boxes


def option_texts(kernel: Kernel, boxes: list[str]) -> list[str]:
    """The options' texts as the page shows them (their descriptions are HTML)."""
    return [html.unescape(re.sub(r"<[^>]+>", "", kernel.widgets[c]["description"]))
            for c in boxes]


def test_question_answered_by_clicks(kernel: Kernel, workdir: Path) -> None:
    out = kernel.execute("%%claude --scripted dec_question.yaml\nPlease ask me about the banner")
    assert "paused for your decision (question)" in out["shown"]
    kernel.wait_widget("CheckboxModel", count=3)  # one per option of the multi-select
    one, multi = option_boxes(kernel)
    wait_status(kernel, "question", "Waiting for you", "expires at")
    # each option once, its description beside it: radio buttons for one choice, none picked
    assert kernel.widgets[one]["_options_labels"] == ["Red — warm and loud",
                                                      "Blue — calm and cool"]
    assert kernel.widgets[one]["index"] is None
    # ... and any number for several
    assert option_texts(kernel, multi) == ["Small — 320 px", "Medium — 768 px", "Large — 1440 px"]
    # headers and questions are on the card; no option is listed a second time
    text = kernel.html_text() + "\n".join(kernel.markdown_outputs())
    for part in ("Color", COLOR_Q, "Sizes", SIZES_Q):
        assert part in text, part
    for part in ("calm and cool", "1440 px"):
        assert part not in text, part
    others = kernel.find_widgets("AnyModel", multiline=False, placeholder="Other (free text)")
    assert len(others) == 2
    notes = kernel.find_widgets("AnyModel", multiline=False,
                                placeholder="Notes for the agent (optional)")
    assert len(notes) == 2
    # pick as the browser does: a click on Red, then on Blue (one choice: Blue)
    kernel.select(one, 0)
    kernel.select(one, 1)
    kernel.set_value(multi[0], True)
    kernel.set_value(multi[2], True)
    kernel.set_value(others[1], "Huge")
    kernel.set_value(notes[0], "match the logo's blue")
    kernel.click(kernel.wait_widget("ButtonModel", description="Submit"))
    wait_status(kernel, "question", "Answered")
    assert settle(kernel) == "idle"
    # the model read the answers: single choice, several choices comma-joined, Other appended
    got = tool_results(workdir)
    assert f'"{COLOR_Q}"="Blue" notes: match the logo\'s blue' in got, got
    assert f'"{SIZES_Q}"="Small, Large, Huge"' in got, got
    md = "\n".join(kernel.markdown_outputs())
    assert "ANSWERS:" in md and "Blue" in md
    all_disabled(kernel, [one, *multi, *others, *buttons(kernel, "Submit")])
    events = kernel.eval(
        "[(e.outcome, e.by, e.answers, e.notes) for e in plan_widgets.get().events "
        "if e.type == 'question:answered']")
    assert "'answered', 'user'" in events and "Small, Large, Huge" in events
    assert "match the logo's blue" in events
    # the summary names each question by its header, as the card does (issue 42, point 10)
    status = card_status(kernel, "question")
    assert "Color = Blue; Sizes = Small, Large, Huge" in status, status
    assert "note on Color: match the logo&#x27;s blue" in status, status  # (escaped HTML)
    assert COLOR_Q not in status, status


def test_question_submit_without_choice_asks_again(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_question.yaml\nPlease ask me about the banner")
    submit = kernel.wait_widget("ButtonModel", description="Submit")
    kernel.click(submit)
    wait_status(kernel, "question", "Pick an option")
    assert kernel.eval("plan_widgets.get().pending.kind") == "'question'"
    # one of two answered: the card names the other and sends only on a second Submit
    one, _multi = option_boxes(kernel)
    kernel.select(one, 0)  # Red
    kernel.click(submit)
    wait_status(kernel, "question", "Not answered yet: Sizes", "Submit again")
    assert kernel.eval("plan_widgets.get().pending.kind") == "'question'"
    kernel.click(submit)
    wait_status(kernel, "question", "Answered")
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert f'"{COLOR_Q}"="Red"' in got and SIZES_Q not in got, got


def test_question_answered_in_code(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_question.yaml\nPlease ask me about the banner")
    kernel.wait_widget("ButtonModel", description="Submit")
    # keyed by the question text or its header; several choices as a list
    kernel.execute(
        "s = plan_widgets.get()\n"
        f"s.pending.answer({{{COLOR_Q!r}: 'Red', 'Sizes': ['Medium', 'Large']}})")
    wait_status(kernel, "question", "Answered")
    all_disabled(kernel, buttons(kernel, "Submit"))
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert f'"{COLOR_Q}"="Red"' in got and f'"{SIZES_Q}"="Medium, Large"' in got, got
    # a question that does not exist is a clear error, not a silent answer
    kernel.execute("%%claude\nPlease ask me about the banner")
    kernel.wait_widget("ButtonModel", description="Submit", count=2)
    out = kernel.execute("plan_widgets.get().pending.answer({'Shape?': 'round'})",
                         allow_error=True)
    assert "no such question" in out["text"]
    assert kernel.eval("plan_widgets.get().pending is not None") == "True"


# -- tool permissions (resting mode `default`) -----------------------------------------------
@pytest.mark.floors
def test_tool_allowed_by_click(kernel: Kernel, workdir: Path) -> None:
    out = kernel.execute("%%claude --scripted dec_tool.yaml\nPlease write two files")
    assert "paused for your decision (tool)" in out["shown"]
    allow = kernel.wait_widget("ButtonModel", description="Allow")
    # the card shows the path and the content to be written; the CLI suggested a rule
    assert "first.txt" in kernel.html_text() + "\n".join(kernel.markdown_outputs())
    assert kernel.find_widgets("CheckboxModel")  # the CLI suggested an update
    assert not (workdir / "first.txt").exists()
    kernel.click(allow)
    wait_status(kernel, "tool", "Allowed")
    kernel.wait_until(lambda: (workdir / "first.txt").exists(), 30, "first.txt written")
    # the second write asks again (Allow was for one call only)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow", count=2))
    assert settle(kernel) == "idle"
    assert (workdir / "second.txt").read_text() == "two\n"
    assert "Both files written" in "\n".join(kernel.markdown_outputs())
    assert kernel.eval("plan_widgets.get().mode") == "'default'"
    # Allowed once: the finished cards name no update (issue 31)
    assert "Also:" not in "\n".join(kernel.markdown_outputs())


def test_tool_always_allowed_applies_the_suggestions(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_tool.yaml\nPlease write two files")
    # the card says in plain words what the CLI's suggestion does, where and for how long
    mode = kernel.wait_widget("CheckboxModel", tooltip=(
        "Also accept every file edit without asking (mode Accept edits), "
        "for this session only"))
    kernel.set_value(mode, True)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow"))
    wait_status(kernel, "tool", "Allowed, with the updates named above")
    assert settle(kernel) == "idle"
    # the CLI's suggestion (acceptEdits for the session) was applied: no second card
    assert (workdir / "first.txt").exists() and (workdir / "second.txt").exists()
    assert len(kernel.find_widgets("ButtonModel", description="Allow")) == 1
    assert kernel.eval("plan_widgets.get().mode") == "'acceptEdits'"
    asked = kernel.eval("sum(e.type == 'tool:requested' for e in plan_widgets.get().events)")
    assert asked == "1"


def test_one_suggestion_taken_without_the_others(kernel: Kernel, workdir: Path) -> None:
    """Issue 42, point 6: of the CLI's suggested updates the person ticks one; the CLI gets
    only that one (the same command is not asked again; the mode stays Manual)."""
    kernel.execute("%%claude --scripted dec_always_one.yaml\nPlease clean up twice")
    kernel.wait_widget("ButtonModel", description="Allow")
    offered = [kernel.widgets[c]["tooltip"] for c in kernel.find_widgets("CheckboxModel")]
    rule = [c for c in kernel.find_widgets("CheckboxModel")
            if "don't ask again for the command" in kernel.widgets[c]["tooltip"]]
    assert rule and len(offered) >= 2, offered
    kernel.set_value(rule[0], True)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow"))
    assert settle(kernel) == "idle"
    assert "Cleaned twice." in "\n".join(kernel.markdown_outputs())
    asked = kernel.eval("sum(e.type == 'tool:requested' for e in plan_widgets.get().events)")
    assert asked == "1"  # the second call ran by the rule taken
    assert kernel.eval("plan_widgets.get().mode") == "'default'"  # the mode was not taken
    kept = (workdir / ".claude" / "settings.local.json").read_text()
    assert "Bash(rm -rf old_banners)" in kept and "acceptEdits" not in kept


def test_tool_denied_with_reason(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_tool.yaml\nPlease write two files")
    reason = kernel.wait_widget("AnyModel", multiline=False, placeholder="Reason (optional)")
    kernel.set_value(reason, "not in this folder please")
    kernel.click(kernel.wait_widget("ButtonModel", description="Deny"))
    wait_status(kernel, "tool", "Denied", "not in this folder please")
    assert settle(kernel) == "idle"
    assert not (workdir / "first.txt").exists()
    assert "not in this folder please" in tool_results(workdir)
    md = "\n".join(kernel.markdown_outputs())
    assert "The write did not happen" in md
    all_disabled(kernel, buttons(kernel, "Allow", "Deny"))


def test_edit_card_shows_the_diff(kernel: Kernel, workdir: Path) -> None:
    (workdir / "greet.txt").write_text("hello world\n")
    kernel.execute("%%claude --scripted dec_edit.yaml\nPlease change the greeting")
    allow = kernel.wait_widget("ButtonModel", description="Allow")
    shown = html.unescape(re.sub(r"<[^>]+>", "", "\n".join(kernel.markdown_outputs())))
    # against the file on disk, with line numbers, the changed word marked (issue 43)
    assert "1   - hello world" in shown and "  1 + goodbye world" in shown
    assert re.search(r"<del [^>]*>hello</del>", "\n".join(kernel.markdown_outputs()))
    assert "greet.txt" in shown
    assert (workdir / "greet.txt").read_text() == "hello world\n"
    kernel.click(allow)
    assert settle(kernel) == "idle"
    assert (workdir / "greet.txt").read_text() == "goodbye world\n"


def test_accept_edits_asks_for_bash_only(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_bash.yaml --mode acceptEdits\nPlease copy the notes")
    allow = kernel.wait_widget("ButtonModel", description="Allow")
    # the Write went through without a card; the Bash command waits, shown as a command line
    assert (workdir / "notes.txt").exists() and not (workdir / "copy.txt").exists()
    shown = html.unescape("\n".join(kernel.markdown_outputs()))  # as the page shows it
    assert "$ sh -c 'cat notes.txt > copy.txt'" in shown
    assert kernel.eval("[d.kind for d in plan_widgets.get().decisions]") == "['tool']"
    kernel.click(allow)
    assert settle(kernel) == "idle"
    assert (workdir / "copy.txt").read_text() == "some notes\n"


def test_tool_decided_in_code(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_tool.yaml\nPlease write two files")
    kernel.wait_widget("ButtonModel", description="Allow")
    kernel.execute("plan_widgets.get().pending.allow()")
    kernel.wait_widget("ButtonModel", description="Allow", count=2)
    kernel.execute("plan_widgets.get().pending.deny('only one file')")
    assert settle(kernel) == "idle"
    assert (workdir / "first.txt").exists() and not (workdir / "second.txt").exists()
    assert "only one file" in tool_results(workdir)


# -- every pending decision ends -------------------------------------------------------------
def test_timeout_expires_and_never_approves(kernel: Kernel, workdir: Path) -> None:
    out = start_plan(kernel, "--approval-timeout 2")
    assert "paused for your decision (plan)" in out["shown"]
    assert kernel.eval("round(plan_widgets.get().decisions[-1].expires_at - "
                       "plan_widgets.get().decisions[-1].asked_at)") == "2"
    wait_status(kernel, "plan", "Expired", "timed out")
    assert settle(kernel) == "idle"
    all_disabled(kernel, buttons(kernel, "Approve", "Keep planning"))
    assert "No answer came from the user within 2 s" in tool_results(workdir)
    assert not (workdir / "work.py").exists()
    assert kernel.eval("plan_widgets.get().mode") == "'plan'"
    outcome = kernel.eval("[(d.status, d.by) for d in plan_widgets.get().state.decisions.values()]")
    assert outcome == "[('expired', 'timeout')]"


def test_timeout_from_config_expires_a_question(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%config ClaudeMagics.approval_timeout = 2")
    out = kernel.execute("%%claude --scripted dec_question.yaml\nPlease ask me about the banner")
    assert "paused for your decision (question)" in out["shown"]
    assert kernel.eval("round(plan_widgets.get().decisions[-1].expires_at - "
                       "plan_widgets.get().decisions[-1].asked_at)") == "2"
    wait_status(kernel, "question", "Expired", "timed out")
    assert settle(kernel) == "idle"
    all_disabled(kernel, buttons(kernel, "Submit"))
    got = tool_results(workdir)
    assert "No answer came from the user within 2 s; the questions were not answered" in got
    assert "REASON:" in "\n".join(kernel.markdown_outputs())


def test_interrupt_button_cancels_a_pending_plan(kernel: Kernel, workdir: Path) -> None:
    start_plan(kernel)
    kernel.click(kernel.wait_widget("ButtonModel", description="Interrupt"))
    wait_status(kernel, "plan", "Cancelled", "interrupted")
    all_disabled(kernel, buttons(kernel, "Approve", "Approve, auto-accept edits",
                                 "Keep planning"))
    assert settle(kernel) == "idle"
    assert not (workdir / "work.py").exists()
    assert_usable_after(kernel, workdir)


def test_interrupt_magic_cancels_a_pending_plan(kernel: Kernel, workdir: Path) -> None:
    start_plan(kernel)
    out = kernel.execute("%claude interrupt")
    assert "interrupt sent" in out["text"]
    wait_status(kernel, "plan", "Cancelled", "interrupted")
    all_disabled(kernel, buttons(kernel, "Approve", "Keep planning"))
    assert settle(kernel) == "idle"
    assert not (workdir / "work.py").exists()
    # a late click on the old card changes nothing
    kernel.click(buttons(kernel, "Approve")[0])
    assert_usable_after(kernel, workdir)
    outcome = kernel.eval("[(d.status, d.by) for d in plan_widgets.get().state.decisions.values()]")
    assert outcome == "[('cancelled', 'interrupt')]"


def test_kernel_interrupt_while_the_cell_waits(kernel: Kernel, workdir: Path) -> None:
    # the model takes its time: the %%claude cell is still waiting when the user presses stop
    cell = kernel.start("%%claude --scripted dec_slow.yaml --plan\nPlan the slow work")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the model request")
    kernel.interrupt()
    kernel.wait_until(lambda: "Interrupted" in kernel.outputs(cell)["text"], 30,
                      "the cell to say it was interrupted")
    assert "Traceback" not in kernel.outputs(cell)["text"]
    cell_ended(kernel, cell)
    assert settle(kernel) == "idle"
    assert not kernel.find_widgets("ButtonModel", description="Approve")
    assert kernel.eval("1 + 1") == "2"
    assert_usable_after(kernel, workdir)


def test_kernel_interrupt_of_a_queued_prompt_never_sends_it(kernel: Kernel,
                                                            workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_slow.yaml --plan --background\nPlan the slow work")
    kernel.wait_until(lambda: requests_of(workdir), 60, "the first turn's model request")
    # this cell waits behind the running turn; the user presses stop while it waits
    cell = kernel.start("%%claude\nhello again")
    # the cell shows its view right before it queues the prompt (no await in between)
    kernel.wait_until(lambda: kernel.outputs(cell)["data"], 30, "the cell's view")
    kernel.interrupt()
    kernel.wait_until(lambda: "this prompt was not sent" in kernel.outputs(cell)["text"], 30,
                      "the cell to say its prompt was not sent")
    cell_ended(kernel, cell)
    kernel.execute("%claude interrupt")  # end the slow turn too
    assert settle(kernel) == "idle"
    assert not [r for r in requests_of(workdir) if "hello again" in r["user"]]
    assert_usable_after(kernel, workdir)


def test_cli_withdrawing_the_request_is_shown(kernel: Kernel, workdir: Path) -> None:
    # An interrupt that reaches the CLI without going through the session: the CLI sends
    # control_cancel_request, the pending callback is cancelled, the card says so.
    start_plan(kernel)
    kernel.execute("s = plan_widgets.get()\nawait s.client.interrupt()")
    wait_status(kernel, "plan", "Cancelled", "withdrawn by the CLI")
    all_disabled(kernel, buttons(kernel, "Approve", "Keep planning"))
    assert settle(kernel) == "idle"
    assert not (workdir / "work.py").exists()


def test_stop_cancels_a_pending_plan(kernel: Kernel, workdir: Path) -> None:
    start_plan(kernel)
    out = kernel.execute("%claude stop")
    assert "%claude resume" in out["text"]
    wait_status(kernel, "plan", "Cancelled", "session closed")
    all_disabled(kernel, buttons(kernel, "Approve", "Keep planning"))
    kernel.wait_until(lambda: kernel.eval("plan_widgets.get().status") == "'closed'", 30,
                      "the session to close")
    assert not (workdir / "work.py").exists()
    assert kernel.eval("1 + 1") == "2"


def test_close_cancels_a_pending_question(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --scripted dec_question.yaml\nPlease ask me about the banner")
    kernel.wait_widget("ButtonModel", description="Submit")
    kernel.execute("await plan_widgets.get().close()", timeout=60)
    wait_status(kernel, "question", "Cancelled", "session closed")
    all_disabled(kernel, buttons(kernel, "Submit"))
    # a new cell starts a fresh session
    out = kernel.execute("%%claude\nhello there", timeout=90)
    assert "Traceback" not in out["text"]
    kernel.wait_until(lambda: any("You said: hello there" in m
                                  for m in kernel.markdown_outputs()), 30, "the reply")


def test_kernel_shutdown_cancels_a_pending_plan(workdir: Path) -> None:
    import time

    k = Kernel(workdir)
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        start_plan(k)
        cli = int(k.eval("plan_widgets.get().cli_pid"))
        sid = k.eval("plan_widgets.get().session_id").strip("'")
    finally:
        k._stop = True
        k.kc.stop_channels()
        k.km.shutdown_kernel(now=False)  # a graceful shutdown, as the frontend's menu does
    log = workdir / ".plan_widgets" / "sessions" / f"{sid}.jsonl"
    decided = [e for e in map(json.loads, log.read_text().splitlines())
               if e["type"] == "plan:decided"]
    # cancelled, never approved: by the close, or by the stop handler when the interrupt that
    # may come with a shutdown reaches it first (ipython/stop.py)
    assert [e["outcome"] for e in decided] == ["cancelled"], decided
    assert decided[0]["by"] in ("close", "interrupt"), decided
    # the CLI does not outlive the kernel (it exits when the kernel's pipes close)
    deadline = time.monotonic() + 20
    while process_running(cli) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not process_running(cli)
    assert not (workdir / "work.py").exists()


def test_the_demo_says_what_the_person_picked(kernel: Kernel, workdir: Path) -> None:
    """Issue 42, point 1: notebook 04's script answers from the picks (it said "a blue banner,
    small and large" whatever was picked, and wrote blue)."""
    script = Path(__file__).parents[1] / "notebooks" / "scripts" / \
        "04_questions_and_permissions.yaml"
    kernel.execute(f"%%claude --scripted {script} --mode default --cwd {workdir}\n"
                   "Make a banner config for the website")
    kernel.wait_widget("ButtonModel", description="Submit")
    kernel.execute("plan_widgets.get().pending.answer({'Color': 'Red', 'Sizes': ['Medium']})")
    kernel.wait_widget("ButtonModel", description="Allow")
    md = "\n".join(kernel.markdown_outputs()) + kernel.html_text()
    assert "a Red banner, in Medium" in md, md[-2000:]
    assert kernel.eval("plan_widgets.get().pending.input['content']").startswith(
        "'{\"color\": \"Red\", \"sizes\": \"Medium\"}")
    # the Write denied with a reason: the reply follows it
    kernel.execute("plan_widgets.get().pending.deny('not now')")
    assert settle(kernel) == "idle"
    assert "I did not write <code>banner.json</code> (not now)" in "\n".join(
        kernel.markdown_outputs())
