"""The session's middle layer with a fake CLI behind its seam: no kernel, no CLI, milliseconds.

Queueing, every way a decision ends, mode tracking, resume, interrupt, close and a CLI that dies
(the end-to-end tests check the same against the real CLI and the scripted model).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fake_client import FakeClient

from plan_widgets.agent.decisions import PlanDecision, QuestionDecision, ToolDecision
from plan_widgets.agent.seam import Allow, Deny
from plan_widgets.agent.session import Session
from plan_widgets.model.errors import SessionError
from plan_widgets.model.options import SessionOptions
from plan_widgets.store import read_events

T = TypeVar("T")
PLAN = {"plan": "# Plan\n\n1. write x.py", "planFilePath": "/nowhere/plan.md"}


def run(coro: Awaitable[T], timeout: float = 10) -> T:
    """Run a test's coroutine on a fresh loop, bounded."""
    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


async def until(pred: Any, timeout: float = 5) -> None:
    """Poll ``pred()`` until it is true (bounded)."""
    async def loop() -> None:
        while not pred():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(loop(), timeout)


def make(tmp_path: Path, script: Any = None, **kw: Any) -> Session:
    fake = kw.pop("fake", {})
    opts = SessionOptions(cwd=str(tmp_path), log_dir=str(tmp_path / "logs"),
                          env={"ANTHROPIC_API_KEY": "test"}, **kw)
    return Session(opts, client=FakeClient.factory(script, **fake))


async def plan_then_write(c: FakeClient, prompt: str) -> None:
    answer = await c.ask("ExitPlanMode", PLAN)
    if isinstance(answer, Allow):
        await c.ask("Write", {"file_path": "x.py", "content": "print(1)"})
        c.say("done")
    c.end_turn()


def kinds(s: Session) -> list[str]:
    return [e.type for e in s.events]


def test_turns_run_in_order_and_text_streams_once(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path)
        first, second = s.ask("one"), s.ask("two")
        assert s.status in ("starting", "working")
        await second
        assert first.done and first.ok and second.ok
        assert (first.number, second.number) == (1, 2)
        assert first.text == "hello: one"  # streamed, then not added again whole
        assert s.status == "idle" and s.mode == "default" and s.model == "fake-model"
        assert kinds(s).count("turn:ended") == 2
        assert first.result is not None and first.result["cost_usd"] == 0.01
        await s.close()
        assert s.status == "closed"

    run(main())


def test_plan_approved_by_the_user_leaves_plan_mode_into_the_resting_mode(
        tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        turn = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert isinstance(d, PlanDecision) and s.mode == "plan" and s.plan_in_force
        d.approve(by="user")
        await turn
        client = FakeClient.instances[-1]
        assert client.answers[0] == Allow(mode="acceptEdits")
        assert s.mode == "acceptEdits" and not s.plan_in_force
        assert [p.plan for p in s.plans] == [PLAN["plan"]]
        assert "plan:decided" in kinds(s) and turn.text.endswith("done")
        await s.close()

    run(main())


@pytest.mark.parametrize("how", ["timeout", "interrupt", "close", "cli"])
def test_every_unanswered_ending_denies_and_never_approves(tmp_path: Path, how: str) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write, approval_timeout=0.2 if how == "timeout" else 60)
        turn = s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        client = FakeClient.instances[-1]
        if how == "interrupt":
            await s.interrupt()
        elif how == "close":
            await s.close()
        elif how == "cli":  # the CLI withdraws the request (control_cancel_request)
            assert client._pending is not None
            client._pending.cancel()
            await asyncio.sleep(0.05)
            client.end_turn()
        await turn
        assert d.outcome is not None and not d.outcome.granted
        assert d.outcome.status == ("expired" if how == "timeout" else "cancelled")
        assert d.outcome.by == how
        assert s.mode == "plan" and not client.queries[1:]
        assert not any(isinstance(a, Allow) for a in client.answers)
        decided = [e for e in s.events if e.type == "plan:decided"]
        assert [e.outcome for e in decided] == [d.outcome.status]
        await s.close()

    run(main())


def test_keep_planning_sends_the_feedback_and_supersedes_the_card(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        first = await c.ask("ExitPlanMode", PLAN)
        assert isinstance(first, Deny) and first.message == "smaller steps"
        await c.ask("ExitPlanMode", {**PLAN, "plan": "# Plan v2"})
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, script)
        turn = s.ask("plan", plan=True)
        (await s.wait_for_decision(5)).reject("smaller steps", by="user")  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)
        second = await s.wait_for_decision(5)
        assert isinstance(second, PlanDecision) and second.plan == "# Plan v2"
        assert isinstance(s.decisions[0], PlanDecision) and s.decisions[0].superseded
        second.approve(by="code")
        await turn
        assert s.mode == "default"
        await s.close()

    run(main())


def test_plan_mode_refuses_other_tools_and_questions_pass(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        write = await c.ask("Write", {"file_path": "x.py", "content": "x"})
        assert isinstance(write, Deny) and "Plan mode is on" in write.message
        answer = await c.ask("AskUserQuestion", {"questions": [
            {"question": "Color?", "header": "Color", "options": [{"label": "Red"}]}]})
        assert isinstance(answer, Allow) and answer.input is not None
        assert answer.input["answers"] == {"Color?": "Red"}
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, script, plan=True)
        turn = s.ask("plan")
        d = await s.wait_for_decision(5)
        assert isinstance(d, QuestionDecision)
        d.answer({"Color": "Red"}, by="user")
        await turn
        assert any(e.type == "error" and e.kind == "plan_refusal" for e in s.events)
        await s.close()

    run(main())


def test_tool_decisions_allow_always_and_deny(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        await c.ask("Bash", {"command": "ls"})
        await c.ask("Bash", {"command": "rm x"})
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, script)
        turn = s.ask("go")
        d = await s.wait_for_decision(5)
        assert isinstance(d, ToolDecision) and d.tool == "Bash"
        d.allow(by="user")
        await asyncio.sleep(0.05)
        d2 = await s.wait_for_decision(5)
        d2.deny("not that", by="user")  # type: ignore[attr-defined]
        await turn
        assert FakeClient.instances[-1].answers == [Allow(), Deny("not that")]
        await s.close()

    run(main())


def test_a_mode_asked_before_the_cli_is_up_is_applied_once_it_is(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path)
        await s.set_plan_mode(True)  # before connect: pending
        assert s.state.requested_mode == "plan" and s.plan_in_force
        await until(lambda: s.mode == "plan")  # confirmed by the CLI once it is up
        assert s.state.requested_mode is None
        await s.set_plan_mode(False)
        assert s.mode == "default"
        await s.close()

    run(main())


def test_a_refused_mode_keeps_the_old_resting_mode(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, fake={"refuse_modes": ("acceptEdits",)})
        await s.wait(5)
        await s.set_mode("acceptEdits")
        assert s.state.refused and "not allowed" in s.state.refused
        assert s.mode == "default" and s.options.mode == "default"
        await s.close()

    run(main())


def test_interrupt_ends_the_turn_and_the_session_stays_usable(tmp_path: Path) -> None:
    async def slow(c: FakeClient, prompt: str) -> None:
        if prompt == "slow":
            await asyncio.sleep(30)
        c.say("quick")
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, slow)
        turn = s.ask("slow")
        while s.current_turn is None:
            await asyncio.sleep(0.01)
        await s.interrupt()
        await turn
        assert turn.error == "Interrupted."
        again = await s.ask("fast")
        assert again.ok and s.status == "idle"
        await s.close()

    run(main())


def test_close_drops_queued_prompts_and_ends_the_cli(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write)
        first = s.ask("plan", plan=True)
        queued = s.ask("later")
        await s.wait_for_decision(5)
        await s.close()
        assert first.done and queued.done and queued.error and "closed" in queued.error
        assert FakeClient.instances[-1].disconnected and s.status == "closed"
        assert FakeClient.instances[-1].queries == ["plan"]
        with pytest.raises(SessionError, match="closed"):
            s.ask("more")

    run(main())


def test_a_cli_that_dies_expires_the_pending_decision_and_ends_the_session(
        tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_write)
        turn = s.ask("plan", plan=True)
        queued = s.ask("later")
        d = await s.wait_for_decision(5)
        FakeClient.instances[-1].die(RuntimeError("boom"))
        await turn
        await queued
        assert s.status == "dead" and d.outcome is not None
        assert (d.outcome.status, d.outcome.by) == ("expired", "cli")
        assert turn.error and "The session ended" in turn.error
        assert queued.error and "boom" in queued.error
        await s.close()

    run(main())


def test_a_cli_that_cannot_start_is_one_line_and_a_final_state(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, fake={"fail_connect": RuntimeError("no such binary")})
        turn = s.ask("hi")
        await turn
        assert s.status == "dead" and s.dead and "no such binary" in s.dead
        assert turn.error and "no such binary" in turn.error
        await s.close()

    run(main())


def test_resume_folds_the_log_and_expires_what_the_old_kernel_left_pending(
        tmp_path: Path) -> None:
    async def main() -> tuple[str, Path, bytes]:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        s.ask("plan", plan=True)
        await s.wait_for_decision(5)
        assert s.log_path is not None
        died = s.log_path.read_bytes()  # the log as the kernel left it when it died
        await s.close()
        return s.session_id, s.log_path, died

    sid, path, died = run(main())
    path.write_bytes(died)

    async def again() -> None:
        s = make(tmp_path, resume=sid)
        assert s.mode == "plan" and s.options.mode == "default"
        (old,) = s.state.decisions.values()
        assert (old.status, old.by) == ("expired", "restart")
        ended = [e for e in s.events if e.type == "turn:ended"]
        assert ended[-1].result == "restarted"
        await s.wait(5)
        assert FakeClient.instances[-1].config.mode == "plan"
        assert FakeClient.instances[-1].config.resume == sid
        await s.close()
        logged = read_events(s.log_path)  # type: ignore[arg-type]
        assert [e.type for e in logged].count("session:started") == 2

    run(again())


def test_a_turns_closing_line_tells_the_agents_time_from_the_persons_wait(
        tmp_path: Path) -> None:
    """Issue 42, point 8: a turn whose model work took under a second read "✓ 43.9 s" because
    its card waited 43 s for the person; the closing line says the two apart."""
    from plan_widgets.agent.turn import NullView

    class Seen(NullView):
        summary = ""

        def finished(self, summary: str, ok: bool) -> None:
            Seen.summary = summary

    async def main() -> None:
        s = make(tmp_path, plan_then_write, mode="acceptEdits")
        turn = s.ask("plan it", plan=True, view=Seen())
        d = await s.wait_for_decision(5)
        await asyncio.sleep(0.6)  # the person reads the plan
        d.approve(by="user")
        await turn
        await s.close()

    run(main())
    got = Seen.summary
    working, waiting = (float(x) for x in re.findall(r"([\d.]+) s (?:working|on your)", got))
    assert re.match(r"[\d.]+ s working · [\d.]+ s on your decisions · ", got), got
    assert waiting >= 0.6 and working < waiting, got  # the wait is not the agent's


def test_a_turn_with_no_card_says_one_time() -> None:
    from plan_widgets.agent.wording import turn_summary

    assert turn_summary(900, 10, 2, None, 0.0).startswith("0.9 s · 10 in / 2 out tokens")
    assert turn_summary(44_000, 1, 1, None, 0.0, waited_s=43.2).startswith(
        "0.8 s working · 43.2 s on your decisions · ")
