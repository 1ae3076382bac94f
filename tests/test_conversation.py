"""The agent's whole conversation, with a fake CLI behind the seam: turns the CLI starts by
itself, background agents, subagent output, cards between cells (milliseconds; the
end-to-end tests check the same against the real CLI and the scripted model)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fake_client import FakeClient
from test_session import make, run, until

from plan_widgets.agent import signals as sig
from plan_widgets.agent.seam import Allow, Deny, PermissionRequest
from plan_widgets.agent.session import Session


class Recorder:
    """A TurnView that keeps what it was told, and whether it was made static."""

    def __init__(self, title: str = "") -> None:
        self.title = title
        self.calls: list[tuple[Any, ...]] = []
        self.done = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a: self.calls.append((name, *a))

    def turn_done(self) -> None:
        self.done = True

    def texts(self) -> str:
        return "".join(c[1] for c in self.calls if c[0] == "text")

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == name]


def between(s: Session) -> list[Recorder]:
    views: list[Recorder] = []

    def factory(title: str) -> Any:
        views.append(Recorder(title))
        return views[-1]

    s.show_between_cells(factory)
    return views


def fake(s: Session) -> FakeClient:
    client = s.client
    assert isinstance(client, FakeClient)
    return client


async def launch_background(c: FakeClient, prompt: str) -> None:
    c.emit(sig.ToolUse("toolu_agent", "Agent", {"description": "Write a file",
                                                "run_in_background": True}))
    c.emit(sig.AgentStart("task1", "toolu_agent", "Write a file", background=True))
    c.emit(sig.ToolResult("toolu_agent", "Async agent launched successfully", False))
    c.say("The agent runs in the background.")
    c.end_turn()


def test_a_self_started_turn_is_a_turn_of_its_own(tmp_path: Path) -> None:
    """The CLI's own turn after a background agent ends: shown between cells, logged with its
    origin, counted in cost, and never in the user's turn."""
    async def main() -> None:
        s = make(tmp_path, launch_background)
        views = between(s)
        mine = Recorder()
        first = s.ask("start", view=mine)  # type: ignore[arg-type]
        await first.wait(5)
        assert [a.id for a in s.running_agents] == ["task1"]
        c = fake(s)
        c.emit(sig.SubagentText("toolu_agent", "subagent at work"))
        c.emit(sig.AgentEnd("task1", "completed", summary="wrote it", tokens=2701))
        c.self_started("NOTIFICATION REPLY")
        await until(lambda: s.state.turns == 2 and not s.state.working)
        assert not s.running_agents and s.agents[0].summary == "wrote it"
        assert [v.title for v in views] == ['Background agent "Write a file" finished']
        assert views[0].texts() == "NOTIFICATION REPLY" and views[0].done
        assert "NOTIFICATION" not in mine.texts() and first.text.endswith("background.")
        assert ("subagent_text", "toolu_agent", "subagent at work") in mine.calls
        ended = [e for e in s.events if e.type == "turn:ended"]
        assert [e.origin for e in ended] == [None, "task-notification"]
        started = [e for e in s.events if e.type == "turn:started"]
        assert [e.origin for e in started] == ["user", "agent"]
        assert s.state.cost_usd == 0.02  # the CLI's running total, the self-started turn's
        await s.close()

    run(main())


def test_a_result_without_the_prompt_never_ends_the_users_turn(tmp_path: Path) -> None:
    """The race: a self-started turn's result arrives while the user's prompt runs; the
    user's turn ends only on its own result, with its own answer."""
    gate: asyncio.Event | None = None

    async def slow(c: FakeClient, prompt: str) -> None:
        assert gate is not None
        c.say("part one. ")
        c.emit(sig.TurnResult("success", origin="task-notification"))  # not ours
        await gate.wait()
        c.say("the real answer")
        c.end_turn()

    async def main() -> None:
        nonlocal gate
        gate = asyncio.Event()
        s = make(tmp_path, slow)
        views = between(s)
        turn = s.ask("question")
        await until(lambda: bool(fake_or_none(s)) and "part one" in turn.text)
        await asyncio.sleep(0.05)
        assert not turn.done
        gate.set()
        await turn.wait(5)
        assert turn.ok and turn.text == "part one. \n\nthe real answer"
        # a result that names no prompt of ours: a turn of the CLI's own, logged, said
        assert len(views) == 1 and views[0].texts() == "" and views[0].done
        assert [e.origin for e in s.events if e.type == "turn:ended"] == [
            "task-notification", None]
        await s.close()

    run(main())


def fake_or_none(s: Session) -> FakeClient | None:
    c = s.client
    return c if isinstance(c, FakeClient) else None


def test_a_prompt_waits_while_the_cli_runs_its_own_turn(tmp_path: Path) -> None:
    """A cell run while the CLI answers a notification: its prompt is sent after that turn."""
    async def main() -> None:
        s = make(tmp_path)
        views = between(s)
        await s.ask("hi").wait(5)
        c = fake(s)
        c.say("the agent's own turn, still going")
        await until(lambda: s.runner.cli_turn is not None)
        mine = Recorder()
        turn = s.ask("next", view=mine)  # type: ignore[arg-type]
        await asyncio.sleep(0.3)
        assert len(c.queries) == 1 and not turn.done and s.status == "working"
        assert any("turn of its own" in m[1] for m in mine.named("marker"))
        c.emit(sig.TurnResult("success", origin="task-notification"))
        await turn.wait(5)
        assert c.queries == ["hi", "next"] and turn.text == "hello: next"
        assert views[0].texts() == "the agent's own turn, still going" and views[0].done
        await s.close()

    run(main())


def test_a_card_between_cells_names_its_agent_and_holds_the_next_prompt(
        tmp_path: Path) -> None:
    """A background agent asks after its cell ended: its card appears in a view of its own,
    the decision reaches the agent, and a prompt asked meanwhile waits behind it."""
    async def main() -> None:
        s = make(tmp_path, launch_background)
        views = between(s)
        await s.ask("start").wait(5)
        c = fake(s)
        request = PermissionRequest("Write", {"file_path": str(tmp_path / "a.txt")},
                                    tool_use_id="toolu_w", agent_id="task1")
        asked = asyncio.get_running_loop().create_task(c.config.can_use_tool(request))
        await until(lambda: s.pending is not None)
        d = s.pending
        assert d is not None and d.agent == "Write a file"
        # the card names its agent; the title above it does not say so again (issue 31)
        assert views[-1].title == "A background agent needs your decision" and views[-1].done
        assert views[-1].named("decision")[0][1] is d
        nxt = s.ask("meanwhile")
        await asyncio.sleep(0.3)
        assert c.queries == ["start"] and not nxt.done
        d.allow()  # type: ignore[attr-defined]
        assert isinstance(await asyncio.wait_for(asked, 5), Allow)
        await nxt.wait(5)
        assert c.queries == ["start", "meanwhile"]
        await s.close()

    run(main())


def test_agents_stop_and_end_with_the_cli(tmp_path: Path) -> None:
    """Stop goes to the CLI; a CLI that dies ends every running agent as stopped, and the
    unknown is said, not dropped."""
    async def two(c: FakeClient, prompt: str) -> None:
        for n in (1, 2):
            c.emit(sig.ToolUse(f"toolu_{n}", "Agent", {"description": f"agent {n}"}))
            c.emit(sig.AgentStart(f"t{n}", f"toolu_{n}", f"agent {n}", background=True))
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, two)
        views = between(s)
        await s.ask("go").wait(5)
        c = fake(s)
        await s.stop_agent("t1")
        await until(lambda: len(s.running_agents) == 1)
        assert c.stopped == ["t1"] and s.agents[0].status == "stopped"
        c.emit(sig.AgentStep("nobody", last_tool="Bash"))
        c.emit(sig.SubagentText("toolu_unknown", "who am I"))
        await until(lambda: len(views) == 2)
        assert [e.message for e in s.events if e.type == "error"][:2] == [
            "The CLI reported progress of an agent this session does not know (nobody)",
            "A subagent message came for an Agent call this session does not know "
            "(toolu_unknown)"]
        c.die()
        await until(lambda: s.status == "dead")
        assert [(a.status, a.summary) for a in s.agents][1] == (
            "stopped", "stopped: the CLI exited")
        await s.close()

    run(main())


def test_close_ends_running_agents_and_an_unknown_result_is_said(tmp_path: Path) -> None:
    async def main() -> None:
        s = make(tmp_path, launch_background)
        views = between(s)
        await s.ask("start").wait(5)
        c = fake(s)
        c.emit(sig.TurnResult("success", prompts=("not-a-prompt-of-ours",)))
        await until(lambda: len(views) == 1)
        assert "did not start" in views[0].named("marker")[0][1]
        await s.close()
        assert s.agents[0].status == "stopped"
        assert s.agents[0].summary == "stopped: the session was closed"
        assert isinstance(Deny("x"), Deny)

    run(main())


def test_thinking_is_logged_and_shown_folded_only_if_wanted(tmp_path: Path) -> None:
    async def think(c: FakeClient, prompt: str) -> None:
        c.emit(sig.Thinking("let me think about " + prompt))
        c.say("the answer")
        c.end_turn()

    async def main() -> None:
        s = make(tmp_path, think)
        shown = Recorder()
        t = s.ask("one", view=shown)  # type: ignore[arg-type]
        await t.wait(5)
        assert shown.named("thinking") == [("thinking", "let me think about one")]
        assert t.text == "the answer"  # never mixed into the answer
        s.update_options(show_thinking=False)
        hidden = Recorder()
        await s.ask("two", view=hidden).wait(5)  # type: ignore[arg-type]
        assert hidden.named("thinking") == []
        logged = [(e.turn, e.text) for e in s.events if e.type == "turn:thinking"]
        assert logged == [(1, "let me think about one"), (2, "let me think about two")]
        await s.close()

    run(main())
