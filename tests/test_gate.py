"""The gate and the decisions, with no kernel and no CLI: every way a decision ends, and the
answer the CLI receives for it (through the SDK adapter, as the real CLI would)."""

from __future__ import annotations

import asyncio

import pytest

from plan_widgets.agent.decisions import Decision, DecisionList, PlanDecision, ToolDecision
from plan_widgets.agent.gate import Gate
from plan_widgets.agent.sdk import to_sdk
from plan_widgets.agent.seam import PermissionRequest
from plan_widgets.model.options import SessionOptions
from plan_widgets.render.suggestions import suggestion_text
from plan_widgets.widgets.kinds.tool import ToolCard


# -- pure logic: the gate and decisions (no kernel, no CLI) ---------------------------------
class _Host:
    """A GateHost: the few things the gate asks of its session (our own protocol)."""

    def __init__(self, timeout: float) -> None:
        self.options = SessionOptions(approval_timeout=timeout)
        self.plan_in_force = False
        self.cli_env: dict[str, str] = {}
        self.host_tools = None  # no kernel tools (tests/test_inspection.py has them)
        self.decision_list = DecisionList()
        self.decisions = self.decision_list.all
        self.refused: list[str] = []

    def open_decision(self, d: Decision) -> None:
        self.decision_list.add(d)

    def decision_closed(self, d: Decision) -> None:
        pass

    def end_decisions(self, by: str, *, only: Decision | None = None) -> None:
        self.decision_list.end_open(by, only=only)  # type: ignore[arg-type]

    def note_refusal(self, tool: str, tool_input: dict) -> None:
        self.refused.append(tool)

    def note_empty_plan(self) -> None:
        self.refused.append("empty plan")

    async def leaving_plan(self, mode: str) -> None:
        pass


def _gate_run(timeout: float, tool: str, tool_input: dict, act=None) -> tuple:
    """Call the gate once; ``act(decision)`` runs as soon as the decision is open."""
    async def main() -> tuple:
        s = _Host(timeout)
        request = PermissionRequest(tool, tool_input, tool_use_id="toolu_1")

        async def ask() -> object:  # as the CLI sees it: the SDK's PermissionResult
            return to_sdk(await Gate(s)(request), request)

        call = asyncio.ensure_future(ask())
        for _ in range(100):
            if s.decisions:
                break
            await asyncio.sleep(0.01)
        if act is not None and s.decisions:
            act(s.decisions[0], call)
        try:
            result = await asyncio.wait_for(call, 10)
        except asyncio.CancelledError:
            result = None
        return result, s.decisions[0]

    return asyncio.run(main())


PLAN_INPUT = {"plan": "# Plan\n\n1. do it", "planFilePath": "/tmp/p.md"}


def test_gate_timeout_denies_and_says_no_answer_came() -> None:
    result, d = _gate_run(0.05, "ExitPlanMode", PLAN_INPUT)
    assert type(result).__name__ == "PermissionResultDeny"
    assert "No answer came from the user" in result.message and "NOT approved" in result.message
    assert d.outcome.status == "expired" and d.outcome.by == "timeout"
    assert not d.outcome.granted


def test_gate_interrupt_denies_and_stops_the_turn() -> None:
    result, d = _gate_run(30, "ExitPlanMode", PLAN_INPUT, lambda d, _c: d.cancel("interrupt"))
    assert type(result).__name__ == "PermissionResultDeny" and result.interrupt
    assert d.outcome.status == "cancelled"
    # once ended, a late approval changes nothing
    assert d.approve(by="user") is False and d.outcome.status == "cancelled"


def test_gate_cli_withdrawal_cancels_the_card() -> None:
    result, d = _gate_run(30, "Write", {"file_path": "/tmp/x", "content": "x"},
                          lambda _d, call: call.cancel())
    assert result is None
    assert d.outcome.status == "cancelled" and d.outcome.by == "cli"


def test_gate_user_answers_become_the_cli_wire_form() -> None:
    questions = [
        {"question": "Color?", "header": "Color", "options": [{"label": "Red"}]},
        {"question": "Sizes?", "header": "Sizes", "multiSelect": True,
         "options": [{"label": "S"}, {"label": "L"}]},
    ]
    result, d = _gate_run(30, "AskUserQuestion", {"questions": questions},
                          lambda d, _c: d.answer({"Color": "Red", "Sizes?": ["S", "L"]},
                                                 by="user"))
    assert type(result).__name__ == "PermissionResultAllow"
    assert result.updated_input["answers"] == {"Color?": "Red", "Sizes?": "S, L"}
    assert result.updated_input["questions"] == questions
    assert "annotations" not in result.updated_input  # no notes given, none sent


def test_gate_question_notes_are_annotations() -> None:
    questions = [{"question": "Color?", "header": "Color", "options": [{"label": "Red"}]}]
    result, _d = _gate_run(30, "AskUserQuestion", {"questions": questions},
                           lambda d, _c: d.answer({"Color": "Red"}, notes={"Color": " warm "},
                                                  by="user"))
    assert result.updated_input["answers"] == {"Color?": "Red"}
    assert result.updated_input["annotations"] == {"Color?": {"notes": "warm"}}


def test_only_a_user_or_code_can_grant_and_only_into_a_resting_mode() -> None:
    async def main() -> None:
        plan = PlanDecision("# Plan", None, "default")
        with pytest.raises(ValueError, match="only the user, code or a rule"):
            plan.approve(by="timeout")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="must name the rule"):
            plan.approve(by="rule")  # a rule grants only naming itself (agent/rules.py)
        with pytest.raises(ValueError, match="unknown mode 'yolo'"):
            plan.approve("yolo")
        with pytest.raises(ValueError, match="unknown mode 'plan'"):
            plan.approve("plan")
        assert not plan.done
        tool = ToolDecision("Write", {}, [])
        with pytest.raises(ValueError):
            tool.allow(by="gate")  # type: ignore[arg-type]
        assert tool.expire() and tool.outcome is not None and not tool.outcome.granted
        assert plan.approve("acceptEdits", by="user") and plan.outcome.mode == "acceptEdits"

    asyncio.run(main())


def test_gate_approval_names_the_next_mode() -> None:
    result, _d = _gate_run(30, "ExitPlanMode", PLAN_INPUT,
                           lambda d, _c: d.approve("acceptEdits", by="user"))
    assert type(result).__name__ == "PermissionResultAllow"
    (update,) = result.updated_permissions
    assert update.type == "setMode" and update.mode == "acceptEdits"


def test_suggestion_text_says_what_where_and_how_long() -> None:
    from claude_agent_sdk import PermissionUpdate
    from claude_agent_sdk.types import PermissionRuleValue

    mode = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")
    assert suggestion_text(mode) == ("accept every file edit without asking (mode Accept edits), "
                                     "for this session only")
    rule = PermissionUpdate(type="addRules", behavior="allow", destination="localSettings",
                            rules=[PermissionRuleValue("Bash", "npm test:*")])
    assert suggestion_text(rule) == (
        "don't ask again for commands starting with “npm test”, from now on in this project, "
        "for you (kept in .claude/settings.local.json)")
    rm = {"type": "addRules", "behavior": "allow", "destination": "projectSettings",
          "rules": [{"toolName": "Bash", "ruleContent": "rm -rf old_banners"}]}
    assert suggestion_text(rm).startswith("don't ask again for the command “rm -rf old_banners”, "
                                          "from now on in this project, for everyone")
    assert suggestion_text({"type": "addRules", "rules": [{"toolName": "Read"}]}) == (
        "don't ask again for every Read call")
    dirs = {"type": "addDirectories", "directories": ["~/old_banners"], "destination": "session"}
    assert suggestion_text(dirs) == "let it work in “~/old_banners” too, for this session only"


# -- pure logic: the card (no kernel) --------------------------------------------------------
def test_each_suggestion_is_a_checkbox_of_its_own() -> None:
    rm = {"type": "addRules", "behavior": "allow", "destination": "localSettings",
          "rules": [{"toolName": "Bash", "ruleContent": "rm -rf old_banners"}]}
    edits = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}

    async def make() -> tuple[ToolCard, ToolCard]:
        bare = ToolCard(ToolDecision("Bash", {"command": "ls"}, []))
        rich = ToolCard(ToolDecision("Bash", {"command": "rm -rf old_banners"}, [rm, edits]))
        return bare, rich

    bare, rich = asyncio.run(make())
    assert bare.also == []
    assert [c.tooltip for c in rich.also] == [  # (the description: the same, as HTML)
        "Also " + suggestion_text(rm), "Also " + suggestion_text(edits)]
    assert bare.decision.allow(always=True)
    assert bare.decision.outcome is not None and bare.decision.outcome.status == "allowed"
    # the mode ticked, the rule not: only the mode is taken
    rich.also[1].value = True
    rich.allow_button.click()
    o = rich.decision.outcome
    assert o is not None and o.status == "always" and o.applied == (1,)
    assert rich.decision.granted_answer(o).rules == (1,)
    assert "Also: accept every file edit" in rich.static_html()
    assert "rm -rf old_banners”, from now" not in rich.static_html()


def test_allow_only_checks_its_places() -> None:
    async def main() -> ToolDecision:
        d = ToolDecision("Bash", {"command": "ls"}, [{"type": "addRules"}])
        with pytest.raises(ValueError, match="it has 1 suggestions"):
            d.allow(only=[3])
        assert d.allow(only=[])  # nothing ticked: this call only
        return d

    d = asyncio.run(main())
    assert d.outcome is not None and d.outcome.status == "allowed" and d.outcome.applied is None


def test_a_new_plan_supersedes_plans_not_approved_only() -> None:
    """A plan sent back (Keep planning) or left open is superseded by the next one; an
    approved plan was carried out, and its finished turn is not re-rendered as "superseded
    by a revised plan" when a later cell plans something new (issue 36: that late update
    moved the turn in a collaborator's page)."""
    asyncio.run(_plans_superseded())


async def _plans_superseded() -> None:
    plans = DecisionList()
    approved, sent_back, left_open = (PlanDecision(f"# Plan {i}", None, "default")
                                      for i in range(3))
    plans.add(approved)
    assert approved.approve(by="user")
    plans.add(sent_back)
    sent_back.reject("smaller steps", by="user")
    plans.add(left_open)
    plans.add(PlanDecision("# Plan 3", None, "default"))
    assert not approved.superseded
    assert sent_back.superseded and left_open.superseded
