"""Issue 22, point 2, end to end: comments on a plan's lines, from the card and from Python,
sent with Keep planning, shown beside their lines in the revision's Changes view, logged,
resumed and left in the static output. The real CLI, a real kernel, the scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e


def _card_heads(k: Kernel) -> list[str]:
    return [m for m in k.markdown_outputs() if "pw-card-title" in m]


def static(k: Kernel) -> str:
    """The cell outputs shown without widgets (display data and its updates), joined."""
    with k._lock:
        return "\n".join(str(m["content"].get("data", {}).get("text/markdown", ""))
                         for m in k.messages if m["header"]["msg_type"] in (
                             "display_data", "update_display_data", "execute_result"))


def test_comments_from_the_card_and_python_reach_the_model_and_the_changes_view(
        workdir: Path) -> None:
    k = Kernel(workdir)
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        out = k.execute("%%claude --scripted plan_comments.yaml --plan\nPlan a greeting")
        assert "paused for your decision (plan)" in out["shown"]
        k.execute("d = plan_widgets.get().pending")
        # from Python: a line by its text
        assert k.eval("d.comment('prints hello', 'print the user name instead').line") == "5"
        # bad input: one line each, nothing kept
        for bad, why in [("d.comment(99, 'x')", "has no line 99"),
                         ("d.comment('no such step', 'x')", "no line of the plan reads"),
                         ("d.comment(5, '   ')", "the comment is empty"),
                         ("d.comment(5, 'x' * 100_000)", "100,000 characters")]:
            err = k.execute(f"try:\n    {bad}\nexcept ValueError as e:\n    print('ERR', e)")
            assert err["text"].startswith("ERR ") and why in err["text"], err["text"]
            assert err["text"].count("\n") == 1  # one line
        assert k.eval("len(d.comments)") == "1"
        # from the card: the plan line by line, rendered (no Markdown marks); click the
        # "## Notes" heading (its section), type, add
        k.click(k.wait_widget("ButtonModel", description="Comment on a line"))
        k.wait_widget("ButtonModel", description="Done commenting")
        k.wait_widget("CheckboxModel", _dom_classes=["pw-plan-line"])  # the lines, shown
        lines = {k.widgets[c]["description"]: c
                 for c in k.find_widgets("CheckboxModel", _dom_classes=["pw-plan-line"])}
        notes = next(c for h, c in lines.items() if "<b>Notes</b>" in h)
        assert any("<code>hello.py</code>" in h for h in lines) and not any(
            "##" in h or "`" in h for h in lines)
        k.set_value(notes, True)
        text = k.wait_widget("AnyModel", multiline=True, _dom_classes=["pw-comment-text"])
        k.set_value(text, "Say which files stay untouched")
        k.click(k.wait_widget("ButtonModel", description="Add comment"))
        assert k.wait_until(lambda: k.eval("len(d.comments)") == "2", 20)
        assert k.eval("d.comments[1].section") == "True"
        # an empty comment from the card: one line on the card, nothing added
        k.set_value(notes, True)
        k.click(k.wait_widget("ButtonModel", description="Add comment"))
        assert k.wait_until(lambda: "The comment is empty" in k.html_text(), 20)
        assert k.eval("len(d.comments)") == "2"
        # edit a comment (Python's, shown below its line) and remove one added by mistake
        k.click(k.wait_widget("ButtonModel", description="Edit comment", index=0))
        assert k.wait_until(lambda: k.widgets[text]["value"] == "print the user name instead")
        k.set_value(text, "print the user name instead, not hello")
        k.click(k.wait_widget("ButtonModel", description="Save comment"))
        assert k.wait_until(lambda: "not hello" in k.eval("[c.note for c in d.comments]"), 20)
        k.execute("d.comment(6, 'a slip')")
        slip = k.wait_until(lambda: [c for c in k.find_widgets("HTMLModel")
                                     if "a slip" in k.widgets[c].get("value", "")])[0]
        row = k.wait_until(lambda: [r for r in k.find_widgets("HBoxModel") if f"IPY_MODEL_{slip}"
                                    in k.widgets[r].get("children", [])])[0]
        drop = k.widgets[row]["children"][2].removeprefix("IPY_MODEL_")
        assert k.widgets[drop]["description"] == "Remove comment"
        k.click(drop)
        assert k.wait_until(lambda: k.eval("sorted(c.line for c in d.comments)") == "[5, 8]")
        assert "not hello" in k.eval("[c.note for c in d.comments]")
        k.set_value(notes, True)  # the form below the Notes heading again, for what follows
        # Keep planning with a 100 KB comment typed and not added: one line on the card, the
        # text stays in its box, nothing is sent
        feedback = k.wait_widget("AnyModel", multiline=True, placeholder=(
            "What should change? (feedback for the agent)"))
        k.set_value(feedback, "Keep it short.")
        k.set_value(text, "y" * 100_000)
        k.click(k.wait_widget("ButtonModel", description="Keep planning"))
        assert k.wait_until(lambda: "The comment is 100,000 characters long" in k.html_text(), 20)
        assert k.eval("d.done") == "False" and k.eval("len(d.comments)") == "2"
        assert len(k.widgets[text]["value"]) == 100_000
        # Keep planning: each comment with its quoted line, then the general feedback
        k.set_value(text, "")
        k.click(k.wait_widget("ButtonModel", description="Keep planning"))
        assert k.wait_until(lambda: k.eval("plan_widgets.get().pending is not None and "
                                           "plan_widgets.get().pending is not d") == "True", 60)
        sent = next(r["tool_result"] for r in requests_of(workdir)
                    if "commented on lines" in r.get("tool_result", ""))
        assert "> 1. Create `hello.py` that prints hello." in sent
        # the line is named by its text: no number the person never saw (issue 42, point 9)
        assert "On the line:\n  > 1. Create `hello.py`" in sent
        assert not re.search(r"(?i)\bline \d", sent), sent
        assert "Comment: print the user name instead, not hello" in sent
        assert "the section '## Notes'" in sent and "Comment: Say which files" in sent
        assert "General feedback: Keep it short." in sent
        # the card says what the person typed, not the message made for the model (issue 31)
        assert k.wait_until(lambda: "your feedback: Keep it short." in k.html_text(), 20)
        assert "commented on lines" not in k.html_text() + static(k)
        # the revision opens on Changes: each comment below its line, touched or not
        assert k.wait_until(lambda: any("Revised plan" in h and "pw-comment-note" in h
                                        for h in _card_heads(k)), 30)
        head = next(h for h in reversed(_card_heads(k)) if "Revised plan" in h)
        first = head.index("print the user name instead")
        assert "changed by this revision" in head[first:first + 400]
        second = head.index("Say which files stay untouched")
        assert "not changed by this revision" in head[second:second + 400]
        assert head.index("- 1. Create") < first  # beside its (old) line
        # the comments are in the log, as events
        log = Path(k.eval("str(plan_widgets.get().log_path)").strip("'"))
        kinds = [json.loads(x)["type"] for x in log.read_text().splitlines()]
        assert kinds.count("plan:commented") == 6  # 2 added, 1 edited (-, +), 1 slip (+, -)
        k.execute("plan_widgets.get().pending.approve('acceptEdits')")
        assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
        # the finished cell's static output keeps the comments
        assert k.wait_until(lambda: "Your comments (sent with Keep planning)" in static(k)
                            and "print the user name instead" in static(k), 30)
        sid = k.eval("plan_widgets.get().session_id").strip("'")
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)")
    finally:
        k.shutdown()
    # a new kernel resumes the session: the comments come back from the log
    k = Kernel(workdir)
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        k.execute(f"%claude resume {sid[:8]}")
        got = k.eval("sorted((c['line'], c['note']) for r in plan_widgets.get().state"
                     ".decisions.values() for c in r.comments)")
        assert got == ("[(5, 'print the user name instead, not hello'), "
                       "(8, 'Say which files stay untouched')]")
    finally:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  allow_error=True)
        k.shutdown()
