"""The terminal's text view without a terminal: re-asked prompts, safe and rendered output."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterable
from typing import Any

import pytest

from plan_widgets.agent.decisions import PlanDecision, QuestionDecision, ToolDecision
from plan_widgets.ipython.termout import MarkdownStream, TerminalOut, terminal_safe
from plan_widgets.ipython.textview import TextTurnView
from plan_widgets.render import prompts
from plan_widgets.widgets.kinds import plan as plan_kind

# -- typing a cell: Enter continues a %%claude cell as it does any cell magic -----------------


@pytest.mark.parametrize("rest", [
    "", " --plan", " --plan\n", " --plan\nAdd a greeting", " --plan\nAdd a greeting\n",
    " --plan\nAdd a greeting\n\n", " --plan\nline one\nline two\n", " --plan\n\n",
])
def test_check_complete_treats_claude_as_it_treats_timeit(rest: str) -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    from plan_widgets.ipython.magics import transform_cell

    tm = TransformerManager()
    tm.cleanup_transforms.append(transform_cell)
    assert tm.check_complete("%%claude" + rest) == tm.check_complete("%%timeit" + rest)
    assert tm.check_complete("%%claude --plan\n")[0] == "incomplete"
    # ... and the cell is still rewritten into an awaited call when it runs
    assert tm.transform_cell("%%claude --plan\nhi\n").startswith("await ")
    assert "run_cell('--plan', '')" in tm.transform_cell("%%claude --plan\n")


# -- choosing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("answer, key", [
    ("a", "a"), ("A", "a"), (" approve ", "a"), ("e", "e"), ("edits", "e"), ("k", "k"),
    ("keep planning", "k"), ("KEEP", "k"),
])
def test_plan_answers_that_are_choices(answer: str, key: str) -> None:
    c = prompts.choose(answer, prompts.PLAN_CHOICES)
    assert c is not None and c.key == key


@pytest.mark.parametrize("answer", ["", "  ", "y", "yes", "ok", "aprove", "ab", "approved", "1"])
def test_plan_answers_that_are_not_choices(answer: str) -> None:
    assert prompts.choose(answer, prompts.PLAN_CHOICES) is None


def test_the_message_names_every_choice() -> None:
    msg = prompts.not_a_choice("y", prompts.PLAN_CHOICES)
    assert msg == ("'y' is not a choice: type a to approve, e to approve and auto-accept edits, "
                   "or k to keep planning.")
    assert prompts.not_a_choice("", prompts.PLAN_CHOICES).startswith("Nothing was chosen: type a")


def test_tool_choices_offer_always_only_with_a_suggested_rule() -> None:
    assert prompts.choose("a", prompts.tool_choices(False)) is None
    assert prompts.choose("a", prompts.tool_choices(True)) is prompts.TOOL_ALWAYS
    assert prompts.choose("yes", prompts.tool_choices(False)) is prompts.TOOL_ALLOW
    assert prompts.choose("n", prompts.tool_choices(False)) is prompts.TOOL_DENY
    assert prompts.choose("x", prompts.tool_choices(True)) is None
    assert "[a]" not in prompts.tool_prompt(False)


LABELS = ["Red", "Green", "Blue"]


@pytest.mark.parametrize("answer, multi, picks", [
    ("2", False, ["Green"]),
    ("blue", False, ["Blue"]),
    ("teal, but darker", False, ["teal, but darker"]),  # own words keep their commas
    ("1, 3", True, ["Red", "Blue"]),
    ("3,1,3", True, ["Blue", "Red"]),
    ("2, magenta", True, ["Green", "magenta"]),
])
def test_question_answers(answer: str, multi: bool, picks: list[str]) -> None:
    assert prompts.read_question_answer(answer, LABELS, multi) == picks


@pytest.mark.parametrize("answer, multi, says", [
    ("", False, "Nothing was chosen: type a number from 1 to 3 or your own words."),
    ("4", False, "4 is not one of the options"),
    ("0", True, "0 is not one of the options"),
    ("1,2", False, "this question takes one choice"),
    (" , ", True, "Nothing was chosen"),
])
def test_question_answers_asked_again(answer: str, multi: bool, says: str) -> None:
    with pytest.raises(prompts.NotAChoice, match=re.escape(says)):
        prompts.read_question_answer(answer, LABELS, multi)


# -- the view asks again (a real loop; the answers come from a worker thread, as input() does) -


@pytest.fixture(autouse=True)
def someone_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests play the person at the terminal (pytest's stdin is no terminal, which
    would count as an unattended run: ipython/unattended.py)."""
    monkeypatch.setenv("PLAN_WIDGETS_UNATTENDED", "no")


def scripted_view(answers: Iterable[str], **kw: Any) -> tuple[TextTurnView, io.StringIO,
                                                              list[str]]:
    it = iter(answers)
    asked: list[str] = []

    def read_line(prompt: str) -> str:
        asked.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    buf = io.StringIO()
    return TextTurnView(buf, use_rich=False, read_line=read_line, **kw), buf, asked


async def decide(view: TextTurnView, d: Any) -> Any:
    view.decision(d)
    return await asyncio.wait_for(asyncio.shield(d._future), 10)


def test_plan_comments_typed_line_by_line() -> None:
    """Issue 22: [c]omment asks for the line, then the comment; a bad one is one line and
    nothing is kept; Keep planning sends the comments with their quoted lines."""
    async def go() -> None:
        view, buf, asked = scripted_view(["c", "99", "x", "c", "prints hello", "",
                                          "c", "prints hello", "Greet by name", "k", "short"])
        d = PlanDecision("# Plan\n\n1. Create hello.py that prints hello.\n", None, "default")
        o = await decide(view, d)
        assert o.status == "rejected" and len(d.comments) == 1
        assert "> 1. Create hello.py that prints hello.\n  Comment: Greet by name" in o.feedback
        assert "General feedback: short" in o.feedback
        out = buf.getvalue()
        assert "The plan has no line 99 with text" in out
        assert "The comment is empty" in out
        assert "comment added on line 3: 1. Create hello.py that prints hello." in out
        assert asked.count("line (its number or its text): ") == 3

    asyncio.run(go())


def test_plan_prompt_asks_again_until_a_choice() -> None:
    async def go() -> None:
        view, buf, asked = scripted_view(["", "y", "aprove", "e"])
        d = PlanDecision("# Plan\n\n1. step", "/p/plan.md", "default")
        o = await decide(view, d)
        assert (o.status, o.by, o.mode) == ("approved", "user", "acceptEdits")
        assert asked == [plan_kind.PLAN_PROMPT] * 4
        out = buf.getvalue()
        assert "Nothing was chosen: type a to approve" in out
        assert "'y' is not a choice" in out and "'aprove' is not a choice" in out
        assert "=== Plan proposed ===" in out and "(plan file: /p/plan.md)" in out

    asyncio.run(go())


def test_auto_edits_for_this_plan_only_at_a_terminal() -> None:
    """Issue 43, point 5: [o] approves into Accept edits for this plan only."""
    async def go() -> None:
        view, _, _ = scripted_view(["o"])
        o = await decide(view, PlanDecision("# Plan\n\n1. step", None, "default"))
        assert (o.status, o.mode, o.back_to) == ("approved", "acceptEdits", "default")
        assert "auto-edits for this plan [o]nly" in plan_kind.PLAN_PROMPT

    asyncio.run(go())


def test_keep_planning_sends_the_feedback() -> None:
    async def go() -> None:
        view, _, asked = scripted_view(["k", "smaller steps"])
        o = await decide(view, PlanDecision("plan", None, "default"))
        assert (o.status, o.feedback) == ("rejected", "smaller steps")
        assert asked[1] == "feedback (optional): "

    asyncio.run(go())


def test_end_of_input_never_approves() -> None:
    async def go() -> None:
        view, _, _ = scripted_view(["y"])  # then EOF
        o = await decide(view, PlanDecision("plan", None, "default"))
        assert o.status == "expired" and not o.granted

    asyncio.run(go())


def test_tool_prompt_asks_again_and_denies_only_when_told() -> None:
    async def go() -> None:
        view, buf, asked = scripted_view(["", "sure", "n", "not that file"])
        o = await decide(view, ToolDecision("Bash", {"command": "rm -rf x"}, []))
        assert (o.status, o.feedback) == ("denied", "not that file")
        assert asked[:3] == ["[y]es / [n]o: "] * 3
        assert "'sure' is not a choice: type y to allow it once, or n to deny it." in buf.getvalue()

        view, _, _ = scripted_view(["x", "a"])
        rule = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        o = await decide(view, ToolDecision("Write", {"file_path": "a.py"}, [rule]))
        assert o.status == "always"

    asyncio.run(go())


def test_question_prompt_asks_again_per_question() -> None:
    async def go() -> None:
        qs = [
            {"question": "Which colour?", "header": "Colour\x1b]0;t\x07", "multiSelect": False,
             "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}]},
            {"question": "Which sizes?", "header": "Sizes", "multiSelect": True,
             "options": [{"label": "S"}, {"label": "M"}, {"label": "L"}]},
        ]
        view, buf, asked = scripted_view(["", "3", "2", "1,9", "1, 3"])
        o = await decide(view, QuestionDecision(qs))
        assert o.answers == {"Which colour?": "Blue", "Which sizes?": "S, L"}
        assert [a.split(":")[0] for a in asked] == ["Colour␛]0;t␇"] * 3 + ["Sizes"] * 2
        out = buf.getvalue()
        assert "1. Red  warm" in out and "(choose one or more)" in out
        assert "3 is not one of the options: type a number from 1 to 2" in out
        assert "9 is not one of the options" in out

    asyncio.run(go())


def test_an_answer_after_the_decision_ended_decides_nothing() -> None:
    async def go() -> None:
        view, _, _ = scripted_view(["a"])
        d = PlanDecision("plan", None, "default")
        d.expire("timeout")
        view.decision(d)
        await asyncio.sleep(0.2)
        assert d.outcome is not None and d.outcome.status == "expired"

    asyncio.run(go())


# -- output -----------------------------------------------------------------------------------

HOSTILE = ("# Title [bold red]x[/] :smile:\n\nSee <b>this</b> \x1b]0;pwned\x07 \x1b[2J"
           "\x9b31m \u202eevil\r over\x08\n\n[l](https://e.x/a) [j](javascript:alert(1))\n\n"
           "```\nprint('\x1b[31m')\n```\n")


def test_terminal_safe_leaves_no_control_character() -> None:
    s = terminal_safe(HOSTILE)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", s)
    assert "␛]0;pwned␇" in s and "<U+009B>" in s and "<U+202E>" in s
    assert terminal_safe("a\tb\nc\r\nd") == "a\tb\nc\nd"


def rich_out() -> tuple[TerminalOut, io.StringIO]:
    pytest.importorskip("rich")
    buf = io.StringIO()
    return TerminalOut(buf, use_rich=True, force_terminal=True), buf


def test_rich_renders_markdown_and_nothing_of_the_model_reaches_the_terminal_raw() -> None:
    out, buf = rich_out()
    assert out.rich
    out.panel("Plan proposed", HOSTILE, "plan file: /x/\x1b[31mp.md")
    raw = buf.getvalue()
    # every escape sequence is rich's own styling (SGR), none from the model
    assert not re.sub(r"\x1b\[[0-9;]*m", "", raw).count("\x1b")
    assert "\x07" not in raw and "\x9b" not in raw and "\r" not in raw
    text = re.sub(r"\x1b\[[0-9;]*m", "", raw)
    assert "# Title" not in text and "Title [bold red]x[/] :smile:" in text  # markup literal
    assert "<b>this</b>" in text  # raw HTML shown as text, not dropped
    assert "l (https://e.x/a)" in text  # links as text, no hyperlink escape (OSC 8)
    assert "[j](javascript:alert(1))" in text  # not a link at all
    assert "Plan proposed" in text and "␛[31mp.md" in text


def test_plain_output_without_rich() -> None:
    buf = io.StringIO()
    out = TerminalOut(buf, use_rich=False)
    out.panel("Plan proposed", "# Plan\n\n1. step \x1b[2J")
    assert buf.getvalue() == ("\n=== Plan proposed ===\n# Plan\n\n1. step ␛[2J\n"
                              "=====================\n")


def test_streamed_markdown_prints_each_block_once_complete() -> None:
    out, buf = rich_out()
    md = MarkdownStream(out)
    for piece in ["Intro **bo", "ld** text.\n", "\n- one\n", "- two\n\n", "Last par", "agraph"]:
        md.feed(piece)
    text = re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())
    assert "Intro bold text." in text and "Last" not in text
    assert "• one" in text or "one" in text
    md.flush()
    text = re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())
    assert text.count("Intro bold text.") == 1 and "Last paragraph" in text
    assert "**" not in text


def test_view_streams_text_and_flushes_before_a_tool_line() -> None:
    buf = io.StringIO()
    view = TextTurnView(buf, interactive=False, use_rich=False)
    view.text("Looking ")
    view.text("now.")
    view.tool_started("t1", "Read", {"file_path": "a.py"})
    view.finished("0.1 s", True)
    assert buf.getvalue() == "Looking now.\n  [Read] {\"file_path\": \"a.py\"}\n(ok: 0.1 s)\n"
