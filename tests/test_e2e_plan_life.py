"""Issue 13 end to end, with the real CLI and the scripted model in a real kernel: the plan
edited on its card, a revision's Changes, the task list across model calls with the context
meter, and a turn's files rewound. Clicks and typing go over the Jupyter protocol as a
frontend sends them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e

EDITED = ("# Plan: greet (edited)\n\n1. Create `hello.py` printing <b>hi</b> for $USER.\n"
          "2. Keep it to one line.\n")


def wait_idle(k: Kernel, msg_id: str, timeout: float = 90) -> None:
    """Wait (bounded) until the turn of cell ``msg_id`` has ended: its footer is shown.

    Watched on iopub, not by running a cell while the turn runs (a cell run right after a
    click sometimes never went idle on ipykernel 7.4, with main's code as well)."""
    def ended() -> bool:
        return any("pw-footer" in str(d.get("text/markdown", ""))
                   for d in k.outputs(msg_id)["data"])

    k.wait_until(ended, timeout, "the turn's footer")
    out = k.execute("print(await plan_widgets.get().wait(timeout=30))", timeout=40)
    assert out["text"].strip() == "idle", out["text"]


def last_fallback(k: Kernel, msg_id: str, mime: str = "text/markdown") -> str:
    """The newest ``mime`` the cell's turn display holds (its static view)."""
    data = [d for d in k.outputs(msg_id)["data"] if "pw-turn" in str(d.get("text/markdown"))]
    return str(data[-1].get(mime, "")) if data else ""


def bar_state(k: Kernel) -> str:
    """The state badge of the newest control bar (with "tasks 2/3" and "ctx 1%")."""
    with k._lock:
        values = [str(s.get("value", "")) for s in k.widgets.values()
                  if s.get("_model_name") == "HTMLModel" and ("idle</b>" in str(s.get("value"))
                                                             or "working…</b>" in str(
                                                                 s.get("value")))]
    return values[-1] if values else ""


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (but the session's logs and the scratch HOME), as bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).parts[0].startswith(".")
            and p.suffix != ".yaml"}


def test_an_edited_plan_is_what_the_model_reads_and_the_plan_file_holds(
        kernel: Kernel, workdir: Path) -> None:
    msg = kernel.start("%%claude --scripted life_edit.yaml --plan --mode acceptEdits\n"
                       "Add a greeting")
    kernel.click(kernel.wait_widget("ButtonModel", description="Edit", timeout=90))
    box = kernel.wait_widget("AnyModel", multiline=True, _dom_classes=["pw-plan-edit"], timeout=30)
    assert kernel.widgets[box]["value"] == "# Plan: greet\n\n1. Create `hello.py`.\n"
    # an edit of only blank space is refused on the card, in one line, and decides nothing
    kernel.set_value(box, "  \n ")
    kernel.click(kernel.wait_widget("ButtonModel", description="Approve"))
    assert kernel.wait_until(lambda: "The edited plan is empty" in kernel.html_text(), 30)
    assert kernel.eval("plan_widgets.get().pending.kind") == "'plan'"
    # Preview renders the edit through the safe path
    kernel.set_value(box, EDITED)
    kernel.set_value(kernel.wait_widget("ToggleButtonModel", description="Preview"), True)
    assert kernel.wait_until(lambda: any(
        "Preview of your edit" in m and "Plan: greet (edited)</h1>" in m
        and "&lt;b&gt;hi&lt;/b&gt;" in m and "$" not in m
        for m in kernel.markdown_outputs()), 30)
    kernel.click(kernel.wait_widget("ButtonModel", description="Approve"))
    wait_idle(kernel, msg)
    # the model read the edited plan, as this CLI words it
    results = [r["tool_result"] for r in requests_of(workdir)]
    assert any("## Approved Plan (edited by user):\n" + EDITED.rstrip() in r for r in results), \
        results
    # the CLI rewrote the plan file with it, byte for byte
    plan_file = json.loads(kernel.execute(
        "import json; print(json.dumps(plan_widgets.get().plans[-1].plan_file))")["text"])
    assert Path(plan_file).read_text(encoding="utf-8") == EDITED
    assert (workdir / "hello.py").read_text() == "print('hello, edited')\n"
    # the log keeps both texts; the plan in force is the approved one
    assert kernel.eval("[(e.edited, e.approved_plan == " + repr(EDITED) + ") for e in "
                       "plan_widgets.get().events if e.type == 'plan:decided']") \
        == "[(True, True)]"
    assert kernel.eval("(plan_widgets.get().plans[-1].plan == " + repr(EDITED) + ", "
                       "plan_widgets.get().plans[-1].proposed_plan.splitlines()[0])") \
        == "(True, '# Plan: greet')"
    assert kernel.wait_until(lambda: "edited by you" in kernel.html_text().lower(), 30)
    # the static fallback and %claude plans show the approved text
    assert "Plan approved, edited by you" in last_fallback(kernel, msg)
    out = kernel.execute("%claude plans")
    shown = "\n".join(str(d.get("text/markdown", "")) + str(d.get("text/html", ""))
                      for d in out["data"])
    assert "edited by you" in shown and "Plan: greet (edited)" in shown


def test_a_revised_plan_opens_on_its_changes(kernel: Kernel, workdir: Path) -> None:
    msg = kernel.start("%%claude --scripted plan_feedback.yaml --mode acceptEdits --plan\n"
                       "Add a greeting script")
    kernel.set_value(kernel.wait_widget("AnyModel", multiline=True, timeout=90),
                     "Please also add a test for it.")
    kernel.click(kernel.wait_widget("ButtonModel", description="Keep planning"))
    toggle = kernel.wait_widget("ToggleButtonModel", description="Changes", timeout=60)
    assert kernel.widgets[toggle]["value"] is True  # the card opens on Changes

    def diff_shown() -> bool:
        return any("Changes from the previous plan: +2" in m and "v2</ins>" in m
                   and "v1</del>" in m and "+ 2. Create `test_hello.py`." in m
                   for m in kernel.markdown_outputs())

    assert kernel.wait_until(diff_shown, 30)
    assert any("Revised plan: review the changes" in m for m in kernel.markdown_outputs())
    kernel.click(kernel.wait_widget("ButtonModel", description="Approve", count=2))
    wait_idle(kernel, msg)
    assert kernel.eval("[r.revises is not None for r in "
                       "plan_widgets.get().state.decisions.values()]") == "[False, True]"
    # the finished turn is static: its card keeps the changes; the text fallback has the
    # unified diff
    assert kernel.wait_until(lambda: "v2</ins>" in last_fallback(kernel, msg), 30)
    text = last_fallback(kernel, msg, "text/plain")
    assert "Revised plan proposed" in text and "```diff\n--- previous plan\n+++ revised plan" \
        in text and "\n+2. Create `test_hello.py`." in text


def test_the_task_list_is_a_live_checklist_and_the_context_is_metered(
        kernel: Kernel, workdir: Path) -> None:
    msg = kernel.start("%%claude --scripted life_tasks.yaml --mode acceptEdits\n"
                       "Write three files")
    assert kernel.wait_until(lambda: any("Tasks 0/3" in m for m in kernel.markdown_outputs()),
                             90)
    wait_idle(kernel, msg)
    assert (workdir / "a.txt").exists() and (workdir / "b.txt").exists()
    assert kernel.eval("plan_widgets.get().cli_env['CLAUDE_CODE_ENABLE_TODO_TOOLS']") == "'1'"
    final = kernel.eval("[(t['subject'], t['status']) for t in [e for e in "
                        "plan_widgets.get().events if e.type == 'tasks:updated'][-1].tasks]")
    assert final == ("[('Write a.txt', 'completed'), ('Write b.txt', 'completed'), "
                     "('Write c.txt', 'pending')]")
    # the list changed across several model calls, one event per change (the refused
    # TodoWrite changed nothing)
    updates = int(kernel.eval("len([e for e in plan_widgets.get().events "
                              "if e.type == 'tasks:updated'])"))
    assert updates == 7, updates  # 3 created, 4 status changes
    served = [r for r in requests_of(workdir) if r["user"] or r["tool_result"]]
    assert len(served) >= 5
    assert any("No such tool available: TodoWrite" in r["tool_result"] for r in served)
    assert kernel.wait_until(lambda: any("Tasks 2/3" in m and "☑" in m and "☐" in m
                                         for m in kernel.markdown_outputs()), 30)
    assert "Tasks 2/3" in last_fallback(kernel, msg)
    # the control bar: "tasks 2/3", and how full the context is
    assert kernel.wait_until(lambda: "tasks <b>2/3</b>" in bar_state(kernel), 30)
    assert kernel.wait_until(lambda: re.search(r"<b>ctx (<1|\d+)%</b>", bar_state(kernel)), 30)
    assert "System tools: " in bar_state(kernel)  # its tooltip
    out = kernel.execute("%claude context")["text"]
    assert re.match(r"default: ctx (<1|\d+)% after turn 1: [\d,]+ of [\d,]+ tokens", out), out
    assert "System tools:" in out
    # a turn with no task list shows no checklist, and the bar drops the count
    out = kernel.execute("%%claude\nhello")
    assert "Tasks" not in str(out["data"][-1].get("text/markdown", ""))
    assert kernel.wait_until(lambda: "tasks <b>" not in bar_state(kernel), 30)
    assert kernel.eval("plan_widgets.get().state.tasks_turn") == "1"


def test_rewinding_an_approved_turn_puts_the_bytes_back(kernel: Kernel, workdir: Path) -> None:
    (workdir / "edit_me.txt").write_bytes(b"line one\nline two\nline three\n")
    (workdir / "overwrite_me.txt").write_bytes("original, ünïcödé, no newline".encode())
    (workdir / "untouched.bin").write_bytes(bytes(range(256)))
    before = snapshot(workdir)
    msg = kernel.start("%%claude --scripted life_rewind.yaml --plan --mode acceptEdits\n"
                       "Change the three files")
    kernel.click(kernel.wait_widget("ButtonModel", description="Approve", timeout=90))
    wait_idle(kernel, msg)
    after = snapshot(workdir)
    assert after["edit_me.txt"] == b"line one\nLINE TWO, EDITED\nline three\n"
    assert after["overwrite_me.txt"] == b"overwritten\n"
    assert after["new.txt"] == b"brand new\n" and "sub/deep/made.txt" in after
    # the finished turn offers Rewind files; it lists the files before anything changes
    plan_file = Path(json.loads(kernel.execute(
        "import json; print(json.dumps(plan_widgets.get().plans[-1].plan_file))")["text"]))
    assert plan_file.is_file()
    # the control bar offers Rewind files for this turn; the static turn names the command
    assert "%claude rewind 1" in last_fallback(kernel, msg)
    kernel.click(kernel.wait_widget("ButtonModel", description="Rewind files (turn 1)",
                                    timeout=30))
    assert kernel.wait_until(lambda: "dry run lists them" in kernel.html_text(), 30)
    listed = kernel.html_text()
    shown = re.sub(r"<(?!/?code)[^>]*>", "", listed)  # each name is a span (whole on a line)
    for name in ("edit_me.txt", "overwrite_me.txt", "new.txt", "sub/deep/made.txt"):
        assert f">{name}</code>" in shown, shown
    # the CLI tracks the plan file the turn wrote too: it is listed, and named as such
    assert "(the plan file)" in listed and "untouched.bin" not in listed
    assert "5 files" in listed
    assert snapshot(workdir) == after and plan_file.is_file()  # the dry run changed nothing
    kernel.click(kernel.wait_widget("ButtonModel", description="Rewind these files"))
    assert kernel.wait_until(lambda: "Rewound 5 files" in kernel.html_text(), 30)
    # every byte is as before the turn; files the turn created are deleted, and this CLI
    # leaves the folders it made behind, empty
    assert snapshot(workdir) == before
    assert not (workdir / "new.txt").exists()
    assert (workdir / "sub" / "deep").is_dir() and not any((workdir / "sub" / "deep").iterdir())
    # the plan file this turn created is deleted with them (the approved text stays in the log)
    assert not plan_file.exists()
    assert kernel.eval("[(e.turn, len(e.files), e.by) for e in plan_widgets.get().events "
                       "if e.type == 'files:rewound']") == "[(1, 5, 'user')]"
    log = kernel.execute("%claude log")
    assert any("files:rewound" in str(d.get("text/plain", "")) for d in log["data"])
    # the session goes on; a rewind from code after the next turn works the same
    out = kernel.execute("p = await plan_widgets.get().rewind(1, dry_run=True)\n"
                         "print(p.exact, p.files)")
    assert out["text"].strip() == "True ()"
    kernel.execute("%claude rewind 1")
    assert kernel.wait_until(lambda: "Nothing to rewind" in kernel.html_text(), 30)
