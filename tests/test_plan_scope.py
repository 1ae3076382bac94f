"""Issue 43, point 5, in the middle layer with a fake CLI: a mode approved for this plan only
lasts for the plan's work (its turn, and the turns the CLI starts for it), then the session
goes back to its resting mode, said in the turn that ends the work and on the bar; a prompt of
the user's runs in the resting mode; a mode the user picks meanwhile wins. The end-to-end test
(tests/test_e2e_plan_modes.py) checks the same against the real CLI and the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_client import FakeClient
from test_conversation import Recorder, between, fake
from test_session import PLAN, make, run, until

from plan_widgets.agent import signals as sig
from plan_widgets.agent.decisions import PlanDecision
from plan_widgets.agent.mode_names import approval_targets, only_label
from plan_widgets.agent.seam import Allow
from plan_widgets.agent.session import Session
from plan_widgets.model import fold
from plan_widgets.store import read_events

BACK = "The plan's work is done: back to Manual (approved for this plan only)"


async def plan_then_work(c: FakeClient, prompt: str) -> None:
    """A plan; approved, a Write (runs unasked in Accept edits); with "background" in the
    prompt also a background agent (its report is a turn the CLI starts by itself)."""
    if prompt.startswith("plan"):
        if isinstance(await c.ask("ExitPlanMode", PLAN), Allow):
            await c.ask("Write", {"file_path": "x.py", "content": "print(1)"})
            if "background" in prompt:
                c.emit(sig.AgentStart("task1", "toolu_agent", "Write a file", background=True))
    else:
        await c.ask("Write", {"file_path": "y.py", "content": "print(2)"})
    c.end_turn()


def modes(s: Session) -> list[tuple[str, str, str]]:
    return [(e.mode, e.state, e.source) for e in s.events if e.type == "plan:mode"]


def markers(view: Any) -> list[str]:
    return [c[1] for c in view.named("marker")]


async def approved(s: Session, view: Recorder, prompt: str = "plan it") -> PlanDecision:
    s.ask(prompt, plan=True, view=view)  # type: ignore[arg-type]
    d = await s.wait_for_decision(5)
    assert isinstance(d, PlanDecision)
    assert d.approve("acceptEdits", by="user", only=True)
    return d


def test_the_resting_mode_comes_back_when_the_plans_turn_ends(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_work, mode="default")
        view = Recorder()
        await approved(s, view)
        await until(lambda: s.state.mode == "default" and not s.state.working)
        # approved into Accept edits for this plan only (the state's back_to: the bar reads it)
        assert modes(s)[-4:-2] == [("acceptEdits", "requested", "approval"),
                                   ("acceptEdits", "effective", "approval")]
        decided = [e for e in s.events if e.type == "plan:decided"]
        assert [(e.mode_after, e.back_to) for e in decided] == [("acceptEdits", "default")]
        assert fake(s).answers[1] == Allow()  # the Write ran unasked, in Accept edits
        assert s.state.back_to is None and s.options.mode == "default"
        assert modes(s)[-2:] == [("default", "requested", "plan_end"),
                                 ("default", "effective", "plan_end")]
        assert BACK in markers(view)  # said in the turn that ended the work
        kinds = [e.type for e in s.events]
        assert kinds.index("turn:ended") < kinds.index("plan:mode", kinds.index("turn:ended"))
        # the log keeps it: the approval for this plan only, and the return
        assert s.log_path is not None
        back = fold(read_events(s.log_path))
        assert (back.mode, back.back_to, back.plans[-1].back_to) == ("default", None, "default")
        # the next prompt runs in Manual: its Write asks
        turn = s.ask("write again")
        d = await s.wait_for_decision(5)
        assert d.kind == "tool" and d.allow()
        await turn
        await s.close()

    run(main())


def test_the_work_goes_on_in_the_turn_the_cli_starts_for_it(tmp_path: Path) -> None:
    """A background agent started by the plan's work: the mode lasts until the turn the CLI
    starts by itself when the agent ends has ended."""
    async def main() -> None:
        s = make(tmp_path, plan_then_work, mode="default")
        views = between(s)
        view = Recorder()
        await approved(s, view, "plan it, in the background")
        await until(lambda: s.state.turns == 1 and not s.state.working)
        assert [a.id for a in s.running_agents] == ["task1"]
        assert s.state.mode == "acceptEdits" and s.state.back_to == "default"
        assert BACK not in markers(view)
        c = fake(s)
        c.emit(sig.AgentEnd("task1", "completed", summary="wrote it"))
        c.self_started("NOTIFICATION REPLY")
        await until(lambda: s.state.mode == "default" and s.state.turns == 2)
        assert [markers(v) for v in views] == [[BACK]]  # said in the CLI's own turn
        await s.close()

    run(main())


def test_a_prompt_of_the_users_runs_in_the_resting_mode(tmp_path: Path) -> None:
    """The plan's background work still runs when the user sends a prompt: the return is
    made before it is sent, and said in its turn."""
    async def main() -> None:
        s = make(tmp_path, plan_then_work, mode="default")
        await approved(s, Recorder(), "plan it, in the background")
        await until(lambda: s.state.turns == 1 and not s.state.working)
        assert s.state.back_to == "default"
        mine = Recorder()
        turn = s.ask("write again", view=mine)  # type: ignore[arg-type]
        d = await s.wait_for_decision(5)  # Manual: the Write asks
        assert d.kind == "tool" and d.allow()
        await turn
        assert markers(mine)[0] == ("Back to Manual for this prompt: the plan's mode was for "
                                    "that plan only (its background work goes on)")
        assert s.state.back_to is None
        await s.close()

    run(main())


def test_a_mode_the_user_picks_meanwhile_wins_and_an_approval_without_it_stays(
        tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, plan_then_work, mode="default")
        await approved(s, Recorder(), "plan it, in the background")
        await until(lambda: s.state.turns == 1 and not s.state.working)
        await s.set_mode("dontAsk")
        assert s.state.back_to is None
        c = fake(s)
        c.emit(sig.AgentEnd("task1", "completed", summary="wrote it"))
        c.self_started("NOTIFICATION REPLY")
        await until(lambda: s.state.turns == 2 and not s.state.working)
        assert s.state.mode == "dontAsk" and "plan_end" not in str(modes(s))
        await s.close()
        # approved without "for this plan only": the mode stays after the work
        (tmp_path / "b").mkdir()
        s = make(tmp_path / "b", plan_then_work, mode="default")
        s.ask("plan it", plan=True)
        d = await s.wait_for_decision(5)
        assert d.approve("acceptEdits", by="user") and d.outcome.back_to is None  # type: ignore
        await until(lambda: s.state.turns == 1 and not s.state.working)
        assert s.state.mode == "acceptEdits" and s.state.back_to is None
        await s.close()

    run(main())


def test_the_picker_offers_each_mode_also_for_this_plan_only() -> None:
    async def main() -> None:
        from plan_widgets.widgets.kinds.plan import PlanCard

        d = PlanDecision(PLAN["plan"], None, "default")
        card = PlanCard(d)
        labels = [label for label, _v in card.target.options]
        want = []
        for mode, label in approval_targets(None, "default"):
            want += [label] + ([only_label(label, "default")] if mode != "default" else [])
        assert labels == want
        assert "Yes, auto-accept edits, for this plan only (then Manual)" in labels
        assert card.target.value == ("default", False)
        card.target.value = ("acceptEdits", True)
        assert card.approve_button.tooltip == (
            "Leave plan mode into Accept edits (acceptEdits), for this plan only (then Manual)")
        card.approve_button.click()
        assert d.outcome is not None and (d.outcome.mode, d.outcome.back_to) == (
            "acceptEdits", "default")
        assert "next mode: Accept edits, for this plan only (then Manual)" in card.static_html()
        # the last choice is offered first and picked again
        d2 = PlanDecision(PLAN["plan"], None, "default")
        d2.last_target, d2.last_only = "acceptEdits", True
        assert PlanCard(d2).target.value == ("acceptEdits", True)

    run(main())
