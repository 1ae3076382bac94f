"""Issue 13's middle layer with a fake CLI (no kernel, no CLI): an edited plan, a revision's
changes, the task list, the context meter and rewinding a turn's files. The end-to-end tests
(tests/test_e2e_plan_life.py) check the same against the real CLI and the scripted model."""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fake_client import FakeClient
from test_render import HOSTILE, problems, second_parse
from test_session import PLAN, kinds, make, run, until

from plan_widgets.agent import context as ctx_mod
from plan_widgets.agent.checklist import Checklist, progress
from plan_widgets.agent.decisions import PlanDecision
from plan_widgets.agent.plan_edits import EMPTY_EDIT
from plan_widgets.agent.seam import Allow
from plan_widgets.agent.session import Session
from plan_widgets.model import fold
from plan_widgets.model.errors import OptionError
from plan_widgets.model.options import SessionOptions
from plan_widgets.render import diff as diff_mod
from plan_widgets.render import look
from plan_widgets.render.markdown import html_block
from plan_widgets.store import read_events

EDITED = "# Plan (edited)\n\n1. write x.py\n2. and <b>a test</b> with $HOME\n"


async def plan_then_write(c: FakeClient, prompt: str) -> None:
    answer = await c.ask("ExitPlanMode", PLAN)
    if isinstance(answer, Allow):
        await c.ask("Write", {"file_path": "x.py", "content": "print(1)"})
    c.end_turn()


# -- 1. the edited plan -----------------------------------------------------------------------


def test_an_edited_plan_is_sent_inside_the_tool_input_and_is_the_plan_in_force(
        tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        turn = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert isinstance(d, PlanDecision) and d.tool_input == PLAN
        assert d.approve(plan=EDITED, by="user")
        await turn
        c = FakeClient.instances[-1]
        # the CLI gets the tool's own input back, with the edited plan in it
        assert c.answers[0] == Allow(input={**PLAN, "plan": EDITED}, mode="acceptEdits")
        assert d.edited and d.approved_plan == EDITED and d.plan == PLAN["plan"]
        decided = [e for e in s.events if e.type == "plan:decided"]
        assert [(e.edited, e.approved_plan) for e in decided] == [(True, EDITED)]
        # the plan in force is what was approved; the proposed text is kept beside it
        p = s.plans[-1]
        assert (p.plan, p.proposed_plan, p.edited) == (EDITED, PLAN["plan"], True)
        # and the log, read back, tells the same
        assert s.log_path is not None
        back = fold(read_events(s.log_path))
        assert back.plans[-1].plan == EDITED and back.plans[-1].proposed_plan == PLAN["plan"]
        await s.close()

    run(main())


@pytest.mark.parametrize("edit", ["", "   \n\t \n"])
def test_an_empty_edit_is_refused_in_one_line_and_decides_nothing(
        tmp_path: Path, edit: str) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write)
        s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert isinstance(d, PlanDecision)
        with pytest.raises(ValueError, match="^" + re.escape(EMPTY_EDIT) + "$"):
            d.approve(plan=edit)
        assert not d.done and s.pending is d
        await s.close()

    run(main())


def test_an_unchanged_edit_approves_the_plan_as_proposed(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        turn = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert isinstance(d, PlanDecision)
        d.approve(plan=PLAN["plan"].replace("\n", "\r\n") + "\n\n")  # same text, other endings
        await turn
        assert FakeClient.instances[-1].answers[0] == Allow(mode="acceptEdits")
        assert not d.edited and d.approved_plan == PLAN["plan"]
        e = [e for e in s.events if e.type == "plan:decided"][0]
        assert (e.edited, e.approved_plan) == (False, None)
        assert s.plans[-1].plan == PLAN["plan"] and not s.plans[-1].edited
        await s.close()

    run(main())


# -- 2. a revision knows its previous version --------------------------------------------------


async def plan_twice(c: FakeClient, prompt: str) -> None:
    first = await c.ask("ExitPlanMode", PLAN)
    if not isinstance(first, Allow):
        await c.ask("ExitPlanMode", {**PLAN, "plan": PLAN["plan"] + "2. test it\n"})
    c.end_turn()


def test_a_revision_after_keep_planning_knows_the_plan_it_revises(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_twice)
        turn = s.ask("plan it", plan=True)
        first = await s.wait_for_decision(5)
        assert isinstance(first, PlanDecision) and first.previous_plan is None
        first.reject("add a test")
        await until(lambda: s.pending is not None and s.pending is not first)
        second = s.pending
        assert isinstance(second, PlanDecision)
        assert second.previous is first and second.previous_plan == PLAN["plan"]
        second.approve()
        await turn
        recs = list(s.state.decisions.values())
        assert [r.revises for r in recs] == [None, first.id]
        await s.close()

    run(main())


def test_a_plan_after_an_approved_one_is_no_revision() -> None:
    async def main() -> None:
        from plan_widgets.agent.decisions import DecisionList

        decisions = DecisionList()
        a = PlanDecision("# A", None, "default")
        decisions.add(a)
        a.approve()
        b = PlanDecision("# B", None, "default")
        decisions.add(b)
        assert b.previous is None  # a new plan for new work, not a revision
        b.reject("no")
        c = PlanDecision("# C", None, "default")
        decisions.add(c)
        assert c.previous is b

    run(main())


class _Styles(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.styles: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.styles.update(v or "" for k, v in attrs if k == "style")


OUR_STYLES = {"display:block;", f"display:block;{look.DIFF_ADD_LINE}",
              f"display:block;{look.DIFF_DEL_LINE}", look.DIFF_INS, look.DIFF_DEL,
              "white-space:pre-wrap"}


@pytest.mark.parametrize("hostile", HOSTILE[:40])
def test_the_diff_of_hostile_plans_is_inert(hostile: str) -> None:
    out = html_block(diff_mod.diff_html(f"# Plan\n\n1. {hostile}\n", f"# Plan\n\n1. x {hostile} y"
                                        f"\n2. {hostile}\n"), "pw-html")
    for html in (out, second_parse(out)):
        # the only styles are the diff's own; nothing else a plan could use
        assert [p for p in problems(html) if "style=" not in p] == [], html
        p = _Styles()
        p.feed(html)
        assert p.styles <= OUR_STYLES, p.styles
    assert "<script" not in out.lower() and "$" not in out


def test_the_diff_marks_lines_and_words() -> None:
    old = "# Plan\n\n1. Create `hello.py`.\n2. Done.\n"
    new = "# Plan\n\n1. Create `hello.py` and `test.py`.\n3. New step.\n2. Done.\n"
    html = diff_mod.diff_html(old, new)
    assert "+2 −1 lines" in html
    assert f'<ins style="{look.DIFF_INS}">' in html and "test.py" in html
    assert re.search(r">- </?", html) or "- " in html
    text = diff_mod.diff_markdown(old, new)
    assert text.startswith("```diff\n--- previous plan\n+++ revised plan\n")
    assert "\n+3. New step." in text and "\n-1. Create `hello.py`." in text
    fenced = diff_mod.diff_markdown("```\na\n```", "```\nb\n```")
    assert fenced.startswith("````diff\n") and fenced.endswith("\n````")
    assert str(diff_mod.diff_stats(old, old)) == "+0 −0 lines"


# -- 3. the task list ---------------------------------------------------------------------------


def _created(tid: str, subject: str) -> dict[str, Any]:
    return {"task": {"id": tid, "subject": subject, "description": subject}}


def _updated(tid: str, to: str) -> dict[str, Any]:
    return {"success": True, "taskId": tid, "updatedFields": ["status"],
            "statusChange": {"from": "pending", "to": to}}


async def task_turn(c: FakeClient, prompt: str) -> None:
    if prompt != "do it":
        c.say("no tasks this time")
        c.end_turn()
        return
    # the CLI refuses a tool this session does not have: its call shows, its result is an error
    c.tool("TodoWrite", {"todos": [{"content": "x", "status": "pending", "activeForm": "x"}]},
           "<tool_use_error>Error: No such tool available: TodoWrite.</tool_use_error>",
           "Error: No such tool available: TodoWrite.", is_error=True)
    c.tool("TaskCreate", {"subject": "Write a.txt", "activeForm": "Writing a.txt"},
           "Task #1 created successfully: Write a.txt", _created("1", "Write a.txt"))
    c.tool("TaskCreate", {"subject": "Write b.txt"}, "Task #2 created successfully",
           _created("2", "Write b.txt"))
    # results of one batch may come back in another order than their calls
    c.tool("TaskUpdate", {"taskId": "2", "status": "in_progress"}, "Updated task #2 status",
           _updated("2", "in_progress"))
    c.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1 status",
           _updated("1", "completed"))
    c.tool("TaskUpdate", {"taskId": "9", "status": "completed"}, "Task not found",
           {"success": False, "taskId": "9", "updatedFields": [], "error": "Task not found"})
    c.say("working")
    c.end_turn()


class Recorder:
    """A view that records the optional hooks (and nothing else)."""

    def __init__(self) -> None:
        self.tasks: list[list[dict[str, Any]]] = []
        self.changed: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None

    def tasks_updated(self, tasks: list[dict[str, Any]]) -> None:
        self.tasks.append(tasks)

    def files_changed(self, turn: Any) -> None:
        self.changed.append(turn)


def test_the_task_list_follows_the_tool_results(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, task_turn)
        view = Recorder()
        await s.ask("do it", view=view)
        updates = [e for e in s.events if e.type == "tasks:updated"]
        assert len(updates) == 4 and len(view.tasks) == 4  # the refusal and "not found": none
        final = [(t["id"], t["subject"], t["status"]) for t in updates[-1].tasks]
        assert final == [("1", "Write a.txt", "completed"), ("2", "Write b.txt", "in_progress")]
        assert progress(s.state.tasks) == (1, 2) and s.state.tasks_turn == 1
        # a turn with no task list adds nothing
        await s.ask("again", view=view)
        assert len([e for e in s.events if e.type == "tasks:updated"]) == 4
        assert s.state.tasks_turn == 1 and s.state.turns == 2
        await s.close()

    run(main())


def test_todowrite_replaces_the_whole_list() -> None:
    c = Checklist()
    todos = [{"content": "A", "status": "completed", "activeForm": "Doing A"},
             {"content": "B", "status": "in_progress", "activeForm": "Doing B"},
             {"content": "C", "status": "pending", "activeForm": "Doing C"}]
    assert c.apply("TodoWrite", {"todos": todos}, {"oldTodos": [], "newTodos": todos}, False)
    assert [(t.subject, t.status, t.active_form) for t in c.tasks] == [
        ("A", "completed", "Doing A"), ("B", "in_progress", "Doing B"), ("C", "pending", "Doing C")]
    assert not c.apply("TodoWrite", {"todos": todos}, {"newTodos": todos}, False)  # no change
    assert not c.apply("TodoWrite", {}, "InputValidationError", True)
    assert c.apply("TaskUpdate", {"taskId": "2", "status": "deleted"},
                   {"success": True, "taskId": "2", "statusChange": {"to": "deleted"}}, False)
    assert [t.subject for t in c.tasks] == ["A", "C"]
    assert c.apply("TaskList", {}, {"tasks": [{"id": "1", "subject": "A", "status": "completed"},
                                              {"id": "3", "subject": "C",
                                               "status": "completed"}]}, False)
    assert progress(c.tasks) == (2, 2)


# -- 4. the context meter ----------------------------------------------------------------------


def test_the_context_is_measured_after_each_turn(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path)
        await s.ask("one")
        await until(lambda: s.context is not None)
        assert s.context.label == "ctx 12%" and s.context.turn == 1
        assert s.context.lines()[0] == "12,000 of 100,000 tokens (12%), model fake-model"
        assert "Free space: 88,000 tokens (free)" in s.context.lines()
        FakeClient.instances[-1].context_usage = {"totalTokens": 30_000, "maxTokens": 100_000}
        now = await s.context_usage()  # measured again, now
        assert now is s.context and now.label == "ctx 30%"
        await s.close()

    run(main())


def test_the_meter_is_read_while_a_plan_waits_but_not_ahead_of_a_quick_approval(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI answers one request at a time: a meter read sent as the card opens held a
    quick Approve's work up behind it (docs/benchmarks.md, figure 1). So it is read once the
    plan has waited ``METER_DELAY``, and not at all for a plan decided before that."""
    monkeypatch.setattr("plan_widgets.agent.gate_host.METER_DELAY", 0.3)

    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        await until(lambda: bool(FakeClient.instances) and s.connected)
        c = FakeClient.instances[-1]
        reads: list[bool] = []  # each meter read: whether a plan was waiting then
        measure = c.get_context_usage

        async def counted() -> dict[str, Any]:
            reads.append(any(not d.done for d in s.decisions))
            return await measure()

        c.get_context_usage = counted  # type: ignore[method-assign]
        turn = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert d.approve("acceptEdits", by="user")  # at once: no read goes ahead of it
        await turn
        await until(lambda: len(reads) == 1)  # the turn's end reads it, with no plan open
        await asyncio.sleep(0.5)  # past the delay: the decided plan's read never comes
        assert reads == [False]
        turn = s.ask("plan it again", plan=True)
        d = await s.wait_for_decision(5)
        await until(lambda: len(reads) == 2, timeout=5)  # read while the plan waits
        assert reads == [False, True] and not d.done
        assert d.approve("acceptEdits", by="user")
        await turn
        await s.close()

    run(main())


def test_a_failing_or_hanging_meter_never_fails_a_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("plan_widgets.agent.meter.CONTEXT_TIMEOUT", 0.1)

    async def main() -> None:
        s = make(tmp_path)
        await until(lambda: bool(FakeClient.instances) and s.connected)
        c = FakeClient.instances[-1]
        c.context_usage = RuntimeError("no /context here")
        first = await s.ask("one")
        assert first.ok
        never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def hang() -> dict[str, Any]:
            return await never

        c.get_context_usage = hang  # type: ignore[method-assign]
        second = s.ask("two")
        third = s.ask("three")  # queued behind: the meter (in the background) holds it not
        await third
        assert second.ok and third.ok and s.context is None
        await s.close()

    run(main())
    assert ctx_mod.ContextUsage.from_cli({"totalTokens": 500, "maxTokens": 1_000_000}).label \
        == "ctx <1%"


def test_a_reading_belongs_to_the_conversation_it_was_asked_in(tmp_path: Path) -> None:
    """Start fresh changes the session's id while a reading of the planning conversation may
    still be on its way: that reading is the planning conversation's, so the next one (the
    new conversation's) shows the drop."""

    async def main() -> None:
        s = make(tmp_path)
        await until(lambda: bool(FakeClient.instances) and s.connected)
        c = FakeClient.instances[-1]
        c.context_usage = {"totalTokens": 12_000, "maxTokens": 100_000}
        old = s.session_id
        await s.runner.meter.read(1)  # the planning conversation: 12%
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def late() -> dict[str, Any]:
            return await answer

        c.get_context_usage = late  # type: ignore[method-assign]
        reading = asyncio.ensure_future(s.runner.meter.read(1))
        await asyncio.sleep(0)  # asked in the planning conversation
        s.session_id = "the-new-conversation"  # (what start fresh does meanwhile)
        answer.set_result({"totalTokens": 12_000, "maxTokens": 100_000})
        assert (await reading).conversation == old
        c.get_context_usage = FakeClient.get_context_usage.__get__(c)  # type: ignore[method-assign]
        c.context_usage = {"totalTokens": 3_000, "maxTokens": 100_000}
        now = await s.runner.meter.read(2)  # the new conversation's first reading
        assert now is not None and now.label == "ctx 12% → 3%", now
        await s.close()

    run(main())


def test_closing_drops_a_meter_reading_the_cli_will_never_answer(tmp_path: Path) -> None:
    """The meter is read in the background after each turn; once the CLI's stdin closes its
    request is never answered. Closed, the session leaves no reading behind (before: the
    task waited out its 5 s timeout after ``close()`` returned)."""
    from plan_widgets.agent import tasks

    async def main() -> None:
        s = make(tmp_path)
        await until(lambda: bool(FakeClient.instances) and s.connected)
        c = FakeClient.instances[-1]
        never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        asked: list[bool] = []

        async def hang() -> dict[str, Any]:
            asked.append(True)
            return await never

        c.get_context_usage = hang  # type: ignore[method-assign]
        assert (await s.ask("one")).ok
        await until(lambda: bool(asked))  # the turn's end asked for the meter: in flight
        reading = [t for t in tasks._running if "Meter.read" in repr(t.get_coro())]
        assert len(reading) == 1 and not reading[0].done()
        await s.close()
        await asyncio.sleep(0)  # (a cancelled task ends at its next step)
        assert reading[0].done(), "a meter reading still waits after close()"
        assert not [t for t in tasks._running if "Meter.read" in repr(t.get_coro())]

    run(main())


# -- 5. rewinding a turn's files -----------------------------------------------------------------


async def write_turn(c: FakeClient, prompt: str) -> None:
    if "write" in prompt:
        await c.ask("Write", {"file_path": f"/w/{prompt.split()[1]}", "content": "x"})
    if "plan file" in prompt:  # the CLI's own plan file is not the turn's work
        await c.ask("Write", {"file_path": "/h/.claude/plans/p.md", "content": "# P"})
    c.end_turn()


def test_a_turn_that_changed_files_offers_rewind_and_rewinds(tmp_path: Path) -> None:
    async def main() -> None:
        opts = SessionOptions(cwd=str(tmp_path), log_dir=str(tmp_path / "logs"),
                              mode="acceptEdits", env={"ANTHROPIC_API_KEY": "t", "HOME": "/h"})
        s = Session(opts, client=FakeClient.factory(write_turn))
        view = Recorder()
        t1 = await s.ask("write a.txt and the plan file", view=view)
        t2 = await s.ask("just talk", view=view)
        t3 = await s.ask("write b.txt", view=view)
        c = FakeClient.instances[-1]
        # each prompt went out with its own id, the one logged for its turn
        started = [e.message_id for e in s.events if e.type == "turn:started"]
        assert c.message_ids == started == [t1.message_id, t2.message_id, t3.message_id]
        assert t1.files == ["/w/a.txt"] and t2.files == []  # the plan file is not the work
        assert view.changed == [t1, t3]
        ended = [e.files for e in s.events if e.type == "turn:ended"]
        assert ended == [["/w/a.txt"], [], ["/w/b.txt"]]
        # the dry run lists every file that changes back: this turn's and later turns'
        plan = await t1.rewind(dry_run=True)
        assert plan.exact and plan.files == ("/w/a.txt", "/w/b.txt") and not plan.done
        assert "files:rewound" not in kinds(s)
        done = await t1.rewind()
        assert done.done and c.rewinds[-1] == (t1.message_id, False)
        ev = [e for e in s.events if e.type == "files:rewound"]
        assert [(e.turn, e.message_id, e.files, e.by) for e in ev] == [
            (1, t1.message_id, ["/w/a.txt", "/w/b.txt"], "code")]
        assert s.state.rewound == (1,)
        # by number, and by default the last turn that changed files
        assert (await s.rewind(3, dry_run=True)).turn == 3
        assert (await s.rewind(dry_run=True)).turn == 3
        with pytest.raises(OptionError, match="no turn 7"):
            await s.rewind(7)
        await s.close()

    run(main())


def test_without_a_dry_run_the_touched_files_are_listed(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, write_turn, mode="acceptEdits")
        t1 = await s.ask("write a.txt")
        await s.ask("write b.txt")
        FakeClient.instances[-1].dry_run = NotImplementedError("no dry run")
        plan = await t1.rewind(dry_run=True)
        assert not plan.exact and plan.files == ("/w/a.txt", "/w/b.txt")
        FakeClient.instances[-1].dry_run = {"canRewind": False, "error": "File rewinding is "
                                            "not enabled."}
        with pytest.raises(Exception, match="File rewinding is not enabled"):
            await t1.rewind()
        await s.close()

    run(main())


def test_no_rewind_while_a_turn_runs_or_with_checkpointing_off(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        t1 = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        with pytest.raises(OptionError, match="no turn of this session changed files"):
            await s.rewind(dry_run=True)
        with pytest.raises(OptionError, match="a turn is running"):
            await s.rewind(1)
        assert isinstance(d, PlanDecision)
        d.approve()
        await t1
        assert (await s.rewind(dry_run=True)).files == ("x.py",)
        await s.close()
        (tmp_path / "off").mkdir()
        off = make(tmp_path / "off", plan_then_write, checkpointing=False)
        with pytest.raises(OptionError, match="checkpointing is off"):
            await off.rewind(dry_run=True)
        await off.close()

    run(main())


# -- the widgets, without a kernel ---------------------------------------------------------------


def _head(card: Any) -> str:
    return str(card.editor.head.outputs[0]["data"]["text/markdown"])


def test_the_plan_card_edits_previews_and_approves_the_edit() -> None:
    async def main() -> None:
        from plan_widgets.widgets.kinds import PlanCard, card_html, decision_markdown

        d = PlanDecision(PLAN["plan"], PLAN["planFilePath"], "default", tool_input=PLAN)
        card = PlanCard(d)
        ed = card.editor
        assert ed.text is None and ed.changes_button is None  # made on the first Edit
        assert ed.edit_button in card.children
        ed.edit_button.click()
        assert ed.text is not None and ed.text.value == PLAN["plan"]
        kids = list(card.children)
        assert kids[kids.index(ed.head) + 1] is ed.text and ed.edit_button not in kids
        assert "Editing the plan" in _head(card) and "write x.py" not in _head(card)
        ed.text.value = "   "
        card.approve_button.click()  # an empty edit: one line on the card, nothing decided
        assert not d.done and "The edited plan is empty" in card.status.value
        ed.text.value = EDITED
        assert ed.preview_button is not None
        ed.preview_button.value = True  # Preview: the edit rendered by the safe path
        assert ed.text not in card.children
        head = _head(card)
        assert "Plan (edited)</h1>" in head and "&lt;b&gt;" in head and "$" not in head
        card.approve_button.click()
        assert d.approved_plan == EDITED and d.edited
        await asyncio.sleep(0)  # the card shows it on the loop's next turn (after the answer)
        assert ed.text not in card.children and ed.edit_button.disabled
        assert "Plan approved, edited by you" in _head(card) and "Plan (edited)</h1>" in _head(card)
        assert "edited by you" in card.status.value
        static = card_html(d)
        assert "Plan approved, edited by you" in static and "Your edits to the proposed" in static
        fallback = decision_markdown(d)
        assert fallback.startswith("**Plan approved, edited by you**\n\n" + EDITED)
        assert "```diff" in fallback

    run(main())


def test_keep_planning_from_the_editor_sends_only_the_feedback() -> None:
    async def main() -> None:
        from plan_widgets.widgets.kinds import PlanCard, card_html

        d = PlanDecision(PLAN["plan"], None, "default", tool_input=PLAN)
        card = PlanCard(d)
        card.editor.edit_button.click()
        assert card.editor.text is not None
        card.editor.text.value = EDITED
        card.feedback.value = "add a test"
        card.keep_button.click()
        assert d.outcome is not None and d.outcome.status == "rejected"
        assert d.outcome.feedback == "add a test" and not d.edited
        assert d.granted_answer(d.outcome).message == "add a test"  # type: ignore[union-attr]
        await asyncio.sleep(0)  # the card shows it on the loop's next turn (after the answer)
        assert "your edit was not sent" in card.status.value
        assert "your edit was not sent" in card_html(d)
        e = d.decided_event()
        assert (e.edited, e.approved_plan) == (False, None)  # type: ignore[union-attr]

    run(main())


def test_a_revised_plan_card_opens_on_changes_and_toggles_to_the_plan() -> None:
    async def main() -> None:
        from plan_widgets.agent.decisions import DecisionList
        from plan_widgets.widgets.kinds import PlanCard, card_html, decision_markdown

        decisions = DecisionList()
        first = PlanDecision("# Plan v1\n\n1. Create `hello.py`.\n", None, "default")
        decisions.add(first)
        first.reject("add a test")
        second = PlanDecision("# Plan v2\n\n1. Create `hello.py`.\n2. Create `test.py`.\n",
                              None, "default")
        decisions.add(second)
        card = PlanCard(second)
        ed = card.editor
        assert ed.mode == "changes" and ed.changes_button is not None
        assert ed.changes_button.value is True and ed.changes_button in card.children
        head = _head(card)
        assert "Revised plan: review the changes" in head
        assert "+2 −1 lines" in head and "v2</ins>" in head and "v1</del>" in head
        assert "<details><summary>The full revised plan</summary>" in head
        ed.changes_button.value = False
        assert "<ins " not in _head(card) and "Plan v2</h1>" in _head(card)
        ed.changes_button.value = True
        assert "v2</ins>" in _head(card)
        fallback = decision_markdown(second)
        assert "```diff\n--- previous plan\n+++ revised plan\n" in fallback
        assert "\n-# Plan v1\n+# Plan v2\n" in fallback
        second.approve()
        assert "v2</ins>" in card_html(second)  # the static card keeps the changes

    run(main())


def test_the_turn_shows_a_live_checklist_and_the_bar_offers_rewind(tmp_path: Path) -> None:
    async def main() -> None:
        from plan_widgets.widgets.control import ControlBar
        from plan_widgets.widgets.rewind import RewindPanel
        from plan_widgets.widgets.turn import WidgetTurnView

        s = make(tmp_path, task_turn)
        bar = ControlBar(s)
        view = WidgetTurnView(s, "do it", bar)
        await s.ask("do it", view=view)
        assert view._tasks is not None
        i, out = view._tasks
        assert out is not None and out in view.children
        html = out.outputs[0]["data"]["text/markdown"]
        assert "Tasks 1/2" in html and "Write a.txt" in html and "☑" in html and "◐" in html
        assert "**Tasks 1/2**" in view.fallback_text()
        assert "- [x] Write a.txt" in view.fallback_text()
        assert "Tasks 1/2" in view.fallback_markdown()  # the static view keeps the list
        await until(lambda: s.context is not None)
        assert "tasks <b>1/2</b>" in bar.state_marker.value
        assert "ctx 12%" in bar.state_marker.value
        assert "System tools: 9,000 tokens" in bar.state_marker.value  # the tooltip
        plain = WidgetTurnView(s, "again", bar)
        await s.ask("again", view=plain)
        assert plain._tasks is None and "Tasks" not in plain.fallback_text()
        await until(lambda: s.context is not None and s.context.turn == 2)
        assert "tasks" not in bar.state_marker.value  # a turn with no list shows none
        await s.close()
        # a turn that wrote files: the bar offers Rewind files for it; asked, it lists them
        (tmp_path / "w").mkdir()
        s2 = make(tmp_path / "w", write_turn, mode="acceptEdits")
        bar2 = ControlBar(s2)
        v2 = WidgetTurnView(s2, "write a.txt", bar2)
        t = await s2.ask("write a.txt", view=v2)
        assert "%claude rewind 1" in v2.fallback_text()
        await until(lambda: bar2.rewind is not None)
        panel = bar2.rewind
        assert isinstance(panel, RewindPanel) and panel.turn == t.number
        assert list(bar2.children)[-1] is panel.button and panel.list is None  # one button
        panel.button.click()
        await until(lambda: panel.card in bar2.children  # the confirmation: a card in the bar
                    and panel.confirm_button in panel.card.children)
        assert panel.list is not None and "a.txt" in panel.list.value
        assert "files:rewound" not in kinds(s2)
        panel.confirm_button.click()
        await until(lambda: "Rewound 1 file" in panel.list.value)
        assert [e.files for e in s2.events if e.type == "files:rewound"] == [["/w/a.txt"]]
        assert panel.card is not None and panel.confirm_button not in panel.card.children
        # a later turn that changed files takes the bar's button over
        await s2.ask("write b.txt", view=WidgetTurnView(s2, "write b.txt", bar2))
        await until(lambda: bar2.rewind is not panel)
        assert bar2.rewind.turn == 2 and panel.button not in bar2.children
        assert panel.button.comm is None  # closed
        await s2.close()

    run(main())


def test_the_terminal_view_shows_progress_changes_and_the_rewind_command() -> None:
    async def main() -> str:
        import io
        from types import SimpleNamespace

        from plan_widgets.agent.decisions import DecisionList
        from plan_widgets.ipython.textview import TextTurnView

        out = io.StringIO()
        view = TextTurnView(out, interactive=False, use_rich=False)
        view.tasks_updated([{"id": "1", "subject": "Write a.txt", "status": "completed"},
                            {"id": "2", "subject": "Write b.txt", "status": "in_progress"}])
        decisions = DecisionList()
        first = PlanDecision("# Plan v1\n\n1. a\n", None, "default")
        decisions.add(first)
        first.reject("more")
        second = PlanDecision("# Plan v2\n\n1. a\n2. b\n", None, "default")
        decisions.add(second)
        view.decision(second)
        view.files_changed(SimpleNamespace(number=3, files=["/w/a.txt"]))
        return out.getvalue()

    text = run(main())
    assert "[tasks 1/2: Write b.txt]" in text
    assert "Changes from the previous plan:" in text and "+# Plan v2" in text
    assert "-# Plan v1" in text and "+2. b" in text
    assert "files changed: /w/a.txt (put them back: %claude rewind 3 --yes)" in text
