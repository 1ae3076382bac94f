"""Unattended rules and the referee (agent/rules.py, issue 33), on real decision objects."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plan_widgets.agent.decisions import PlanDecision, QuestionDecision, ToolDecision
from plan_widgets.agent.rules import Referee, RuleError, Rules
from plan_widgets.agent.seam import Deny

QUESTIONS = [{"question": "Which word?", "header": "Word",
              "options": [{"label": "ok"}, {"label": "fine"}]}]


@pytest.mark.parametrize(("text", "says"), [
    ("plans=approve:yolo", "unknown mode `yolo`"),
    ("plans=maybe", "write plans=approve"),
    ("tools=allow:Bash(ls *", "bad tool pattern `Bash(ls *`"),
    ("tools=permit:Read", "write tools=allow:PATTERNS"),
    ("questions=second", "write questions=first"),
    ("colour=red", "unknown rule `colour`"),
    ("plans", "is not KEY=VALUE"),
])
def test_a_malformed_rule_is_one_line_naming_the_setting(text: str, says: str) -> None:
    with pytest.raises(RuleError) as e:
        Rules.parse(text, "PLAN_WIDGETS_RULES")
    assert str(e.value).startswith("PLAN_WIDGETS_RULES: ") and says in str(e.value)
    assert "\n" not in str(e.value)


def _referee(rules: str, decider: Any = None) -> Referee:
    r = Referee()

    async def nobody() -> bool:
        return False

    r.presence = nobody
    r.rules = lambda: Rules.parse(rules, "PLAN_WIDGETS_RULES")
    r.decider = decider
    return r


async def _ruled(r: Referee, *decisions: Any) -> None:
    for d in decisions:
        r.review(d)
    for _ in range(20):
        await asyncio.sleep(0)


def test_rules_decide_each_ask_in_order_and_say_which_rule() -> None:
    async def main() -> None:
        r = _referee("plans=approve:acceptEdits; questions=option:fine; "
                     "tools=allow:Bash(git *),Read; tools=deny:Bash(git push*)")
        plan = PlanDecision("# Plan: x", None, "default")
        q = QuestionDecision(QUESTIONS)
        ok = ToolDecision("Bash", {"command": "git status"}, [])
        push = ToolDecision("Bash", {"command": "git push origin"}, [])
        await _ruled(r, plan, q, ok, push)
        assert plan.outcome.status == "approved" and plan.outcome.mode == "acceptEdits"
        assert plan.outcome.by == "rule" and plan.outcome.rule == "plans=approve:acceptEdits"
        assert q.outcome.answers == {"Which word?": "fine"}
        assert ok.outcome.status == "allowed"
        assert ok.outcome.rule == "tools=allow:Bash(git *),Read"
        assert push.outcome.status == "denied"  # a deny wins
        assert plan.decided_event().rule == "plans=approve:acceptEdits"  # and in the log
        assert r.failures == []
        order = [d.outcome.at for d in (plan, q, ok, push)]
        assert order == sorted(order)

    asyncio.run(main())


def test_no_rule_never_approves_and_names_the_decision_and_the_setting() -> None:
    async def main() -> None:
        r = _referee("questions=option:maybe")
        plan = PlanDecision("# Plan: add work.py\n\n1. Create it.", None, "default")
        tool = ToolDecision("Bash", {"command": "rm -rf build"}, [])
        q = QuestionDecision(QUESTIONS)
        await _ruled(r, plan, tool, q)
        for d in (plan, tool, q):
            assert d.outcome.status == "cancelled" and d.outcome.by == "unattended"
            assert not d.outcome.granted
        answer = plan.cli_answer(60)
        assert isinstance(answer, Deny) and answer.interrupt
        lines = r.take_failures()
        assert 'approve the plan "Plan: add work.py"' in lines[0]
        assert "PLAN_WIDGETS_RULES" in lines[0] and "plans=approve:acceptEdits" in lines[0]
        assert "allow Bash `rm -rf build`" in lines[1]
        assert "has no option `maybe` (its options: ok, fine)" in lines[2]

    asyncio.run(main())


def test_a_python_decider_comes_first_and_names_itself() -> None:
    async def main() -> None:
        def careful(d: Any) -> None:
            if d.kind == "tool" and d.input.get("command", "").startswith("ls"):
                d.allow()

        r = _referee("tools=deny:Bash", careful)
        ls = ToolDecision("Bash", {"command": "ls"}, [])
        rm = ToolDecision("Bash", {"command": "rm x"}, [])
        await _ruled(r, ls, rm)
        assert ls.outcome.status == "allowed" and ls.outcome.rule == "decider:careful"
        assert rm.outcome.status == "denied" and rm.outcome.rule == "tools=deny:Bash"

    asyncio.run(main())


def test_someone_there_leaves_the_card_to_them() -> None:
    async def main() -> None:
        r = _referee("plans=approve")

        async def someone() -> bool:
            return True

        r.presence = someone
        plan = PlanDecision("# Plan", None, "default")
        await _ruled(r, plan)
        assert not plan.done

    asyncio.run(main())


def test_a_decider_that_raises_fails_the_run_naming_it() -> None:
    async def main() -> None:
        def broken(d: Any) -> None:
            raise KeyError("oops")

        r = _referee("plans=approve", broken)
        plan = PlanDecision("# Plan", None, "default")
        await _ruled(r, plan)
        assert plan.outcome.status == "cancelled" and not plan.outcome.granted
        assert "the Python decider `broken` failed: KeyError" in r.take_failures()[0]

    asyncio.run(main())


def test_an_unattended_decider_leaves_a_persons_card_to_them() -> None:
    """``decide_with(fn, unattended=True)`` (the example notebooks): with someone there the
    card waits for their click; with no one, the decider decides it."""
    async def main() -> None:
        def approve(d: Any) -> None:
            d.approve()

        for there in (True, False):
            r = _referee("", approve)
            r.decider_unattended = True

            async def presence(there: bool = there) -> bool:
                return there

            r.presence = presence
            plan = PlanDecision("# Plan", None, "default")
            await _ruled(r, plan)
            if there:
                assert not plan.done and r.failures == []
            else:
                assert plan.outcome.status == "approved"
                assert plan.outcome.rule == "decider:approve"

    asyncio.run(main())
