"""Issue 26 without a kernel: what a finished turn leaves behind, and the control bar's state.

The widgets run against a recorder of comms and displays (tests/test_widgets_light.py), so
what a frontend would show, and what a notebook saved without widget state keeps (the
Markdown and text fallbacks of each display), can be read back.
"""

from __future__ import annotations

import asyncio
import io
import re
from types import SimpleNamespace
from typing import Any

import test_widgets_light as _light
from test_widgets_light import Comms, Handle

from plan_widgets.agent.decisions import PlanDecision, QuestionDecision, ToolDecision
from plan_widgets.agent.rewind import RewindPlan

comms = _light.comms  # the fixtures: a recorder of comms, and of displays
displays = _light.displays
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
QUESTIONS = [{"question": "Which color?", "header": "Color", "multiSelect": False,
              "options": [{"label": "Red"}, {"label": "Blue"}]}]


def _session(mode: str | None = "acceptEdits", model: str | None = "claude-test",
             **kw: Any) -> Any:
    state = SimpleNamespace(mode=mode, requested_mode=None, refused=None, model=model, turns=1)
    s = SimpleNamespace(name="default", state=state, status="working", plan_in_force=False,
                        subscribe=lambda fn: None, options=SimpleNamespace(cwd="/w"),
                        cli_env={"HOME": "/home/ada"}, **kw)
    return s


def _plain(bundle: dict[str, Any]) -> str:
    return str(bundle["text/plain"])


def _words(md: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", md).split())


# -- 2. the static control line ----------------------------------------------------------------
def test_a_cells_bar_is_updated_once_when_a_later_cell_takes_it_and_the_turn_says_its_mode(
        comms: Comms, displays: list[Handle]) -> None:
    """The newest cell's bar display is never updated in place (in a shared notebook, an
    update of a cell's first output lands after its turn in the other pages: issue 36), so its
    fallback says only what stays true; the turn's record says the mode and model it ran
    under, and the cell keeps that line once a later cell takes the bar."""
    from plan_widgets.widgets import ControlBar, WidgetTurnView

    async def main() -> None:
        s = _session(mode=None, model=None)  # shown before the CLI reported anything
        bar = ControlBar(s)
        first = WidgetTurnView(s, "hello", bar)
        turn = first.show()
        shown = displays[-2]  # the bar, then the turn
        assert shown is not turn and _plain(shown.last) == "session default"
        s.state.mode, s.state.model = "acceptEdits", "claude-test"
        bar.refresh()  # the session notifies its subscribers; the bar refreshes
        first.text("Hi.")
        first.finished("1.0 s", True)
        first.turn_done()
        assert len(shown.shown) == 1  # the live bar's display: never updated
        assert "✓ 1.0 s · mode Accept edits · model claude-test" in _plain(turn.last)
        assert "✓ 1.0 s · mode Accept edits · model claude-test" in _words(
            turn.last["text/markdown"])
        assert WIDGET_VIEW not in turn.last
        s.state.mode = "plan"
        bar.refresh()
        WidgetTurnView(s, "again", bar).show()  # a later cell takes the bar
        assert len(shown.shown) == 2 and WIDGET_VIEW not in shown.last  # updated once
        assert _plain(shown.last) == "session default · mode Accept edits · model claude-test"
        assert _words(shown.last["text/markdown"]) == (
            "session default · mode Accept edits · model claude-test")

    asyncio.run(main())


# -- 3. the waiting line -----------------------------------------------------------------------
def test_the_waiting_line_names_the_waiting_card_and_goes_when_it_is_decided(
        comms: Comms, displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar, WidgetTurnView

    async def main() -> tuple[WidgetTurnView, Handle]:
        s = _session()
        view = WidgetTurnView(s, "make a banner", ControlBar(s))
        handle = view.show()
        q = QuestionDecision(QUESTIONS)
        view.decision(q)
        view.cell_returned()  # the cell returns: the question waits
        handle.update(view.mimebundle())
        line = "the turn paused for your decision (question) on the card above."
        assert line in _plain(handle.last)
        # the fallback (what a notebook saved now keeps) says what stays true (issue 36)
        for out in (_plain(handle.last), _words(handle.last["text/markdown"])):
            assert "not decided as of" in out, out
            assert re.search(r"At \d\d:\d\d:\d\d the turn paused", out), out
            # no line says it still waits (the saved-notebook check's pattern; issue 36)
            assert not re.search(r"(?i)waiting for you|expires at", out), out
        assert line in _words(handle.last["text/markdown"])
        q.answer({"Which color?": "Blue"}, by="user")
        t = ToolDecision("Bash", {"command": "rm -rf old"}, [])
        view.decision(t)  # the next card: the line names it, not the answered question
        handle.update(view.mimebundle())
        assert "paused for your decision (tool)" in _plain(handle.last)
        assert "(question)" not in _plain(handle.last)
        t.deny("no", by="user")
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view, handle

    view, handle = asyncio.run(main())
    assert view.static
    for out in (_plain(handle.last), handle.last["text/markdown"]):
        assert "paused for your decision" not in out and "expires in" not in out
    assert "Denied" in handle.last["text/markdown"]


def test_an_expired_plan_leaves_no_waiting_line(comms: Comms, displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar, WidgetTurnView

    async def main() -> Handle:
        s = _session()
        view = WidgetTurnView(s, "plan it", ControlBar(s))
        handle = view.show()
        d = PlanDecision("# Plan\n\n1. step", "/home/ada/.claude/plans/p.md", "acceptEdits")
        view.decision(d)
        view.cell_returned()
        assert view.waiting_line().startswith("Waiting for your decision (plan)")
        assert len([c for c in view.children if "Waiting for your" in str(
            getattr(c, "value", ""))]) == 1  # live: a line under the card
        d.expire()
        view.finished("3 s", False)
        view.turn_done()
        await asyncio.sleep(0)
        return handle

    handle = asyncio.run(main())
    assert "paused for your decision" not in _plain(handle.last)
    assert "Expired" in _plain(handle.last) or "expired" in _plain(handle.last)


# -- 4. task tools fold into the checklist -----------------------------------------------------
TASKS = [{"id": "1", "subject": "Write a.txt", "status": "completed"},
         {"id": "2", "subject": "Write b.txt", "status": "in_progress", "active_form": "b"}]


def test_task_tools_show_as_the_checklist_alone(comms: Comms, displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar, WidgetTurnView

    async def main() -> WidgetTurnView:
        s = _session()
        view = WidgetTurnView(s, "three files", ControlBar(s))
        view.show()
        view.tool_started("t0", "TodoWrite", {"todos": [{"content": "x"}]})
        view.tool_finished("t0", "<tool_use_error>No such tool available: TodoWrite",
                           True)  # a refused call: one quiet line
        view.tool_started("t1", "TaskCreate", {"subject": "Write a.txt", "description": "a"})
        view.tool_finished("t1", "Task #1 created successfully: Write a.txt", False)
        view.tasks_updated(TASKS[:1])
        for i, status in enumerate(("in_progress", "completed")):
            view.tool_started(f"u{i}", "TaskUpdate", {"taskId": "1", "status": status})
            view.tool_finished(f"u{i}", "Updated task #1 status", False)
            view.tasks_updated(TASKS)
        view.tool_started("w1", "Write", {"file_path": "/w/a.txt", "content": "a"})
        view.tool_finished("w1", "File created", False)
        view.finished("1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view

    view = asyncio.run(main())
    md = view.fallback_markdown()
    text = view.fallback_text()
    for out in (md, text):
        assert "TaskCreate" not in out and "TaskUpdate" not in out and "taskId" not in out
        # the refused call, once: in the HTML its line says why (issue 21) and folds the result
        assert out.count("No such tool available") == (2 if out is md else 1)
        assert "Write a.txt" in out and "a.txt" in out
    assert md.count("pw-tasks") == 1 and md.count('class="pw-tool"') == 2  # TodoWrite, Write


def test_task_tools_in_the_terminal_are_the_tasks_line_alone() -> None:
    from plan_widgets.ipython.textview import TextTurnView

    buf = io.StringIO()
    view = TextTurnView(buf, interactive=False, use_rich=False)
    view.tool_started("t1", "TaskCreate", {"subject": "Write a.txt"})
    view.tool_finished("t1", "Task #1 created", False)
    view.tasks_updated(TASKS[:1])
    view.tool_started("u1", "TaskUpdate", {"taskId": "1", "status": "completed"})
    view.tool_finished("u1", "Updated", False)
    view.tasks_updated(TASKS)
    view.tool_started("w1", "Write", {"file_path": "a.txt"})
    out = buf.getvalue()
    assert "TaskCreate" not in out and "TaskUpdate" not in out, out
    assert "[tasks 1/2: Write b.txt]" in out and "[Write]" in out


# -- 5. the rewind confirmation ----------------------------------------------------------------
class _Rewind:
    """The session's ``rewind`` (a dry run lists ``files``)."""

    def __init__(self, files: tuple[str, ...]) -> None:
        self.files = files

    async def __call__(self, turn: int, *, dry_run: bool = False, by: str = "code") -> RewindPlan:
        return RewindPlan(turn, "m1", self.files, 2, 1, exact=True, done=not dry_run)


def test_the_rewind_confirmation_is_a_card_with_whole_names(comms: Comms) -> None:
    from plan_widgets.widgets.rewind import rewind_box

    plan_file = "/home/ada/.claude/plans/add-a-greeting-script-spicy-wigderson.md"
    s = _session(rewind=_Rewind(("/w/src/hello.py", plan_file)))

    async def main() -> Any:
        box = rewind_box(s, 1)
        for _ in range(5):
            await asyncio.sleep(0)
        return box

    box = asyncio.run(main())
    card = box.children[1]
    assert "pw-card-rewind" in card._dom_classes
    html = card.children[0].value
    assert 'class="pw-card-title"' in html and "Rewind 2 files" in html
    assert "<small>" not in html  # (a <small> keeps the line height: double-spaced lines)
    # paths break after a "/", never inside a name; the plan file is written from ~
    names = re.findall(r'<span style="display:inline-block[^"]*">([^<]*)</span>(/<wbr>)?', html)
    assert [n for n, _ in names] == ["src", "hello.py", "~", ".claude", "plans",
                                     "add-a-greeting-script-spicy-wigderson.md"]
    assert [bool(slash) for _, slash in names] == [True, False, True, True, True, False]
    assert "/home/ada" not in re.sub(r'title="[^"]*"', "", html)
    assert [b.description for b in card.children[1:]] == ["Rewind these files", "Cancel"]


# -- 6. bar state that lingers -----------------------------------------------------------------
def _bar_session(files_turn: Any, turns: int) -> Any:
    s = _session(runner=SimpleNamespace(files_turn=files_turn),
                 rewind=_Rewind(("/w/a.txt",)))
    s.state.turns = turns
    return s


def _rewind_buttons(bar: Any) -> list[Any]:
    return [c for c in bar.children if getattr(c, "description", "").startswith("Rewind files")]


def test_rewind_is_offered_only_for_the_latest_turn_and_cancel_leaves_nothing(
        comms: Comms) -> None:
    from plan_widgets.widgets import ControlBar

    async def main() -> None:
        s = _bar_session((1, ["/w/a.txt"]), 1)
        bar = ControlBar(s)
        assert [b.description for b in _rewind_buttons(bar)] == ["Rewind files (turn 1)"]
        bar.rewind.ask()
        for _ in range(5):
            await asyncio.sleep(0)
        assert bar.rewind.card in bar.children  # the confirmation, in the bar
        bar.rewind.cancel()
        assert bar.rewind.card not in bar.children and bar.rewind.list not in bar.children
        assert "Not rewound" not in " ".join(str(getattr(c, "value", "")) for c in bar.children)
        s.state.turns = 2  # a later turn that changed no files
        bar.refresh()
        assert _rewind_buttons(bar) == []

    asyncio.run(main())


def test_a_closed_sessions_bar_can_no_longer_be_clicked(comms: Comms) -> None:
    from plan_widgets.widgets import ControlBar

    s = _bar_session((1, ["/w/a.txt"]), 1)
    s.status = "idle"
    bar = ControlBar(s)
    assert not bar.toggle.disabled and not _rewind_buttons(bar)[0].disabled
    s.status = "closed"
    bar.refresh()
    assert bar.toggle.disabled and bar.interrupt_button.disabled
    assert [b.disabled for b in _rewind_buttons(bar)] == [True]
    assert "closed" in bar.state_marker.value
