"""Issue 21's views without a kernel: subagents under their Agent line, thinking folded,
refusals said, turns that follow in the newest cell, the bar's agents, ``%claude agents``,
cards that name the agent that asks; and the terminal's text of each.

Real ipywidgets objects; the comms are the recorder of test_widgets_light (every
``comm_open`` and ``comm_close`` a frontend would receive is counted).
"""

# ruff: noqa: F811  (the fixtures comms and displays come from test_widgets_light)
from __future__ import annotations

import asyncio
import html
import io
import time
from types import SimpleNamespace
from typing import Any

import ipywidgets as w
import pytest
from test_render import tags
from test_widgets_light import Comms, Handle, comms, displays, live  # noqa: F401

from plan_widgets.agent.decisions import ToolDecision
from plan_widgets.model.state import AgentRecord

HOSTILE = "<img src=x onerror=alert(1)>"
WIDGET = "application/vnd.jupyter.widget-view+json"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _session(agents: tuple[AgentRecord, ...] = ()) -> Any:
    state = SimpleNamespace(mode="acceptEdits", requested_mode=None, refused=None,
                            model="claude-test", agents=agents)
    s = SimpleNamespace(name="default", state=state, status="working", plan_in_force=False,
                        subscribe=lambda fn: None, stopped=[])

    async def stop_agent(agent_id: str) -> None:
        s.stopped.append(agent_id)

    s.stop_agent = stop_agent
    return s


def _record(**kw: Any) -> AgentRecord:
    base = dict(id="task-1", description="Write a file", tool_use_id="a1", background=True,
                started=time.time() - 12, last_tool="Bash", tokens=1234, tool_uses=3)
    base.update(kw)
    return AgentRecord(**base)  # type: ignore[arg-type]


def _view(s: Any = None) -> Any:
    from plan_widgets.widgets import ControlBar, WidgetTurnView

    s = s or _session()
    view = WidgetTurnView(s, "do it", ControlBar(s))
    view.show()
    return view


def _outputs_html(box: Any) -> str:
    """Every safe HTML an Output or HTML widget under ``box`` shows."""
    out = []
    stack = [box]
    while stack:
        x = stack.pop()
        if isinstance(x, w.Output):
            out.extend(o["data"].get("text/markdown", "") for o in x.outputs)
        elif isinstance(x, w.HTML):
            out.append(x.value)
        stack.extend(getattr(x, "children", ()))
    return "\n".join(out)


def _text(safe_html: str) -> str:
    """What a reader sees of some safe HTML (tags dropped, references decoded)."""
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", safe_html))


# -- 1. subagents under their Agent line ---------------------------------------------------------
def test_a_subagent_shows_under_its_agent_line_live_static_and_late(
        comms: Comms, displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.text("Main reply.")
        view.tool_started("a1", "Agent", {"description": HOSTILE, "prompt": "write it",
                                          "run_in_background": True})
        view.agent_updated("a1", _record(description=HOSTILE))
        view.subagent_text("a1", f"Sub **says** {HOSTILE}")
        view.subagent_tool_started("a1", "s1", "Bash", {"command": "ls /tmp"})
        view.subagent_tool_finished("a1", "s1", "listing", False)
        view.tool_finished("a1", "Async agent launched", False)
        view.text(" And more main text.")
        live_html = _outputs_html(view.nested.blocks["a1"].box)
        main_text = view._stream.text
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view, live_html, main_text

    view, live_html, main_text = run(main())
    # never in the main reply
    assert "Sub" not in main_text and "And more main text." in main_text
    line = _text(live_html)
    assert f'Agent "{HOSTILE}" · running in background · last tool Bash · 3 tools · ' \
           "1.2k tokens · 12 s" in line
    assert "Sub says" in line and "ls /tmp" in line and "listing" in line
    assert "<strong>says</strong>" in live_html
    assert "img" not in tags(live_html) and "&lt;img src=x onerror=alert(1)&gt;" in live_html
    # static: the Agent line, folded, with the subagent's parts inside it, after the reply
    assert view.static and live(comms) == sorted(["Button", "ControlBar", "HTML", "HTML",
                                                   "HTML", "ToggleButton"])
    md = displays[-1].last["text/markdown"]
    assert WIDGET not in displays[-1].last
    assert md.index("Main reply.") < md.index('class="pw-tool pw-agent"') < md.index(
        "Sub <strong>says</strong>") < md.index("And more main text.")
    assert "img" not in tags(md)
    # a late part (the agent ends after the turn went static) reaches the static output
    view.agent_updated("a1", _record(description="Write a file", status="completed",
                                     ended=time.time(), duration_ms=42_000,
                                     summary="Wrote hello.py"))
    md = _text(displays[-1].last["text/markdown"])
    assert '✓ ↳ Agent "Write a file" · 3 tools · 1.2k tokens · 42 s — Wrote hello.py' in md
    assert "running in background" not in md
    assert '✓ `Agent` "Write a file" · 3 tools' in displays[-1].last["text/plain"]


def test_a_subagents_card_waits_under_its_line_and_names_it(comms: Comms,
                                                            displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.tool_started("a1", "Agent", {"description": "Write a file"})
        view.agent_updated("a1", _record())
        d = ToolDecision("Write", {"file_path": "/tmp/x.py", "content": "print(1)"}, [])
        d.agent_id, d.agent = "task-1", "Write a file"
        view.decision(d)
        block = view.nested.blocks["a1"]
        card = block.box.children[-1]
        first = card.children[0].value
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        waiting = view.static
        d.allow(by="user")
        await asyncio.sleep(0)
        return view, card, first, waiting

    view, card, first, waiting = run(main())
    assert 'Agent "Write a file" asks' in _text(first)
    assert view.cards == [card] and not waiting  # the card kept the turn live
    assert view.static and card.comm is None
    md = displays[-1].last["text/markdown"]
    agent_part = md[md.index("pw-agent"):]
    assert "<details class=\"pw-tool pw-agent\" open>" in md  # its card shows, not folded
    assert "Allowed" in agent_part and 'Agent "Write a file" asks' in _text(agent_part)


def test_a_long_running_agents_line_stays_bounded_and_keeps_its_cards(
        comms: Comms, displays: list[Handle]) -> None:
    from plan_widgets.widgets.nested import PART_LIMIT

    async def main() -> Any:
        view = _view()
        view.tool_started("a1", "Agent", {"description": "Explore"})
        view.agent_updated("a1", _record())
        d = ToolDecision("Bash", {"command": "ls"}, [])
        d.agent_id = "task-1"
        view.decision(d)
        for i in range(PART_LIMIT + 10):
            view.subagent_tool_started("a1", f"s{i}", "Read", {"file_path": f"/f{i}"})
        view.tool_finished("a1", f"# Found\n\n{HOSTILE} in 3 files", False)
        return view, d

    view, d = run(main())
    block = view.nested.blocks["a1"]
    assert len(block.parts) == PART_LIMIT and len(block.tools) == PART_LIMIT - 1
    assert block.parts[0] == ("card", d)  # a card that may still wait is never dropped
    static = block.html(view.nested.tool_html, static=True)
    assert "… 11 earlier parts not shown" in static and "/f0" not in static
    assert "/f69" in static and "<h1>Found</h1>" in static  # the answer, rendered
    assert "img" not in tags(static)


def test_thinking_is_one_folded_line_apart_from_the_answer(comms: Comms,
                                                           displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.thinking("Let me think about $HOME and " + "x" * 1200 + HOSTILE)
        view.text("The answer.")
        view.finished("0.1 s", True)
        view.turn_done()
        return view

    view = run(main())
    md = displays[-1].last["text/markdown"]
    assert "Thinking… 1.3k chars" in md
    head, answer = md.split("The answer.")[0], md
    assert '<details class="pw-thinking">' in head and "img" not in tags(md)
    assert "&#36;HOME" in md  # the safe render path: no math, raw HTML as text
    assert "*Thinking… 1.3k chars*" in view.fallback_text()
    assert answer.count("The answer.") == 1


def test_a_refused_tool_says_why_in_its_line(comms: Comms, displays: list[Handle]) -> None:
    refusal = ("<tool_use_error>Auto mode is unavailable: its safety check does not run for "
               f"this session, so Agent was not run {HOSTILE}\nsecond line</tool_use_error>")

    async def main() -> Any:
        view = _view()
        view.tool_started("t1", "Bash", {"command": "rm -rf build"})
        view.tool_finished("t1", [{"type": "text", "text": refusal}], True)
        view.tool_started("a1", "Agent", {"description": "Explore"})
        view.tool_finished("a1", refusal, True)
        view.finished("0.1 s", True)
        view.turn_done()
        return view

    view = run(main())
    md = displays[-1].last["text/markdown"]
    summaries = [s.split("</summary>")[0] for s in md.split("<summary>")[1:]]
    bash = next(s for s in summaries if "Bash" in s)
    agent = next(s for s in summaries if "Agent" in s)
    for line in (bash, agent):
        assert "✗ Auto mode is unavailable: its safety check does not run" in _text(line)
        assert "second line" not in line and "tool_use_error" not in line
        assert "img" not in tags(line)
    assert "✗ Auto mode is unavailable" in view.fallback_text()


# -- 2. views that follow in the newest cell ------------------------------------------------------
def test_turns_between_cells_follow_in_the_newest_cells_display(
        comms: Comms, displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.text("The cell's answer.")
        view.finished("0.1 s", True)
        view.turn_done()
        handle = displays[-1]
        opened = len(comms.opened)
        # a background agent's notification turn, while no cell runs
        first = view.follow('Background agent "Write a file" finished')
        first.text("The agent wrote hello.py.")
        live_first = handle.last
        # a card while no cell runs: a view of its own below
        card_view = first.follow(f'Agent "{HOSTILE}" asks')
        d = ToolDecision("Bash", {"command": "ls"}, [])
        d.agent = HOSTILE
        card_view.decision(d)
        card_view.turn_done()  # card-only: done right after the decision
        first.finished("0.2 s", True)
        first.turn_done()
        still_live = WIDGET in handle.last
        d.allow(by="user")
        await asyncio.sleep(0)
        return view, handle, live_first, still_live, opened

    view, handle, live_first, still_live, opened = run(main())
    assert WIDGET in live_first and "The cell's answer." in live_first["text/markdown"]
    assert still_live  # the card waited: the display stayed live
    out = handle.last
    assert set(out) == {"text/markdown", "text/plain"}  # all static: no widget left
    md = out["text/markdown"]
    assert md.index("The cell's answer.") < md.index("The agent wrote hello.py.") < md.index(
        "Allowed")
    assert "img" not in tags(md) and "Background agent" in md
    # every model the followers and the container opened is closed
    assert live(comms) == sorted(["Button", "ControlBar", "HTML", "HTML", "HTML",
                                  "ToggleButton"])
    assert len(displays) == 2  # the bar and the cell's turn: no display of their own


def test_a_follower_of_a_live_turn_stacks_below_it(comms: Comms,
                                                   displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.text("still streaming")
        follower = view.follow("A turn the CLI started by itself")
        shown = displays[-1].last[WIDGET]["model_id"]
        stack = view._stack
        box = stack.box.model_id
        kids = stack.box.children
        follower.finished("0.1 s", True)
        follower.turn_done()
        after = stack.box.children
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view, follower, shown, box, kids, after, stack

    view, follower, shown, box, kids, after, stack = run(main())
    assert shown == box  # the cell's display shows the one container
    assert kids[0] is view and kids[1] is follower  # both live, in order
    assert after[0] is view and isinstance(after[1], w.Output)  # its static copy
    assert stack.box is None and WIDGET not in displays[-1].last
    assert view.mimebundle() == stack.static_bundle()


# -- 4. the control bar's agents ------------------------------------------------------------------
def test_the_bar_shows_agents_only_once_there_were_some(comms: Comms,
                                                        displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar

    async def main() -> Any:
        s = _session()
        bar = ControlBar(s)
        before = list(bar.children)
        recs = tuple(_record(id=f"task-{i}", tool_use_id=f"a{i}",
                             description=HOSTILE if i == 0 else f"agent {i}")
                     for i in range(20))
        s.state.agents = recs
        bar.refresh()
        panel = bar.agents_panel
        one_line = list(bar.children)
        said = panel.button.description
        panel.button.click()
        opened = list(bar.children)
        rows = list(panel.list.children)
        first = rows[0].children[0].value
        rows[0].children[1].click()  # Stop on the first
        await asyncio.sleep(0.01)
        ended = _record(id="task-0", description=HOSTILE, status="completed",
                        ended=time.time(), summary=f"Done {HOSTILE}")
        s.state.agents = (ended, *recs[1:])
        bar.refresh()
        return before, one_line, said, opened, rows, first, panel, s

    before, one_line, said, opened, rows, first, panel, s = run(main())
    assert not any(getattr(c, "description", "").startswith("agents") for c in before)
    assert one_line[-1] is panel.button and said == "agents 20"
    assert len(one_line) == len(before) + 1  # one button, whatever the number
    assert opened[-1] is panel.list and panel.list.layout.max_height == "188px"
    assert panel.list.layout.overflow == "auto" and panel.list.layout.flex == "1 1 100%"
    assert len(rows) == 20
    assert "img" not in tags(first) and "&lt;img" in first
    assert "running in background · last tool Bash · 3 tools · 1.2k tokens · 12 s" in _text(first)
    assert s.stopped == ["task-0"]
    # ended: its summary, no Stop, listed after the running ones
    assert panel.button.description == "agents 19"
    last = panel.list.children[-1]
    assert last.children == (last.children[0],) and "✓" in _text(last.children[0].value)
    assert "Done <img" in _text(last.children[0].value)
    assert "img" not in tags(last.children[0].value)


def test_a_stop_that_fails_says_why_and_the_list_keeps_the_last_ended(
        comms: Comms, displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar
    from plan_widgets.widgets.agents import ENDED_SHOWN

    now = time.time()
    ended = tuple(_record(id=f"done-{i}", tool_use_id=f"d{i}", status="completed",
                          ended=now - 100 + i, summary=f"summary {i}") for i in range(7))

    async def main() -> Any:
        s = _session((*ended, _record()))

        async def refuse(agent_id: str) -> None:
            raise RuntimeError("no running agent 'task-1' (see %claude agents)")

        s.stop_agent = refuse
        bar = ControlBar(s)
        panel = bar.agents_panel
        panel.button.click()
        stop = panel.list.children[0].children[1]
        stop.click()
        clicked = stop.disabled
        await asyncio.sleep(0.01)
        return panel, stop, clicked

    panel, stop, clicked = run(main())
    texts = [_text(r.children[0].value if isinstance(r, w.HBox) else r.value)
             for r in panel.list.children]
    assert clicked and not stop.disabled and stop.description == "Stop"
    assert "Could not stop it: no running agent 'task-1'" in texts[-1]
    # the running one, then the last ENDED_SHOWN that ended (newest first), then the note
    assert len(texts) == 1 + ENDED_SHOWN + 1
    assert [t.split("— ")[1].strip() for t in texts[1:-1]] == [
        f"summary {i}" for i in (6, 5, 4, 3, 2)]


# -- 5. %claude agents ---------------------------------------------------------------------------
def test_claude_agents_lists_them_running_first(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from plan_widgets.ipython import agents as cmd
    from plan_widgets.ipython import commands, registry

    now = time.time()
    recs = (_record(id="t-old", description="Old one", status="completed", ended=now - 5,
                    duration_ms=30_000, summary="Found 3 files", tokens=0),
            _record(id="t-run", description=HOSTILE, started=now - 65))
    shown: list[Any] = []
    monkeypatch.setattr(cmd, "show_table", lambda head, rows, caption: shown.append(
        (head, rows, caption)))
    s = SimpleNamespace(name="default", agents=list(recs), closed=False, dead=None)
    monkeypatch.setattr(registry, "_sessions", {"default": s})
    commands.run(None, "agents --session default")
    [(head, rows, caption)] = shown
    assert head == ("agent", "status", "elapsed", "last tool", "tokens", "summary", "id")
    assert rows[0][:5] == (HOSTILE, "running (background)", "1 min 05 s", "Bash", "1.2k")
    assert rows[1] == ("Old one", "completed", "30 s", "Bash", "", "Found 3 files", "t-old")
    assert caption.startswith("default: 1 running, 1 ended")
    s.agents = []
    commands.run(None, "agents")
    assert capsys.readouterr().out == "default: no agents\n"


def test_claude_agents_table_escapes_descriptions() -> None:
    from plan_widgets.ipython.agents import HEAD, rows
    from plan_widgets.render.table import table_bundle

    bundle = table_bundle(HEAD, rows([_record(description=HOSTILE)]))
    assert "img" not in tags(bundle["text/html"]) and HOSTILE in bundle["text/plain"]


# -- 6. cards name the agent that asks ------------------------------------------------------------
def test_static_and_text_cards_name_the_agent(comms: Comms) -> None:
    from plan_widgets.widgets.kinds import card_html, decision_markdown

    async def main() -> Any:
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, [])
        d.agent = HOSTILE
        plain = ToolDecision("Write", {"file_path": "/x", "content": "y"}, [])
        return card_html(d), decision_markdown(d), card_html(plain)

    card, md, plain = run(main())
    assert _text(card).find(f'Agent "{HOSTILE}" asks') < _text(card).find("/x")
    assert "img" not in tags(card)
    assert md.startswith(f'*Agent "{HOSTILE}" asks*')
    assert "asks" not in _text(plain)


# -- 8. the terminal ------------------------------------------------------------------------------
def test_the_terminal_shows_subagents_indented_and_thinking_folded() -> None:
    from plan_widgets.ipython.textview import TextTurnView

    async def main() -> str:
        out = io.StringIO()
        v = TextTurnView(stream=out, interactive=False, use_rich=False)
        v.text("Main.\n\n")
        v.tool_started("a1", "Agent", {"description": "Write a file"})
        v.agent_updated("a1", _record())
        v.agent_updated("a1", _record(tokens=2000))  # progress: no second line
        v.subagent_text("a1", "I will write it.\x1b[31m")
        v.subagent_tool_started("a1", "s1", "Write", {"file_path": "/tmp/x"})
        v.subagent_tool_finished("a1", "s1", "<tool_use_error>Denied by user\nmore", True)
        v.thinking("hmm " * 400)
        d = ToolDecision("Write", {"file_path": "/tmp/x"}, [])
        d.agent = "Write a file"
        v.decision(d)
        v.agent_updated("a1", _record(status="completed", ended=time.time(),
                                      duration_ms=5000, summary="Wrote /tmp/x"))
        v.tool_finished("t9", "<tool_use_error>Auto mode is unavailable: no\nx", True)
        return out.getvalue()

    text = run(main())
    lines = text.splitlines()
    assert "  [agent 'Write a file': running]" in lines
    assert sum("running" in ln for ln in lines) == 1
    assert "    [Write a file] I will write it.␛[31m" in lines
    assert "    [Write a file] [Write] {\"file_path\": \"/tmp/x\"}" in lines
    assert "    [Write a file] [error] Denied by user" in lines
    assert "  (Thinking… 1.6k chars)" in lines
    assert 'Agent "Write a file" asks' in lines
    assert ("  [agent 'Write a file': completed · 3 tools · 1.2k tokens · 5 s] — Wrote /tmp/x"
            in lines)
    assert "  [error] Auto mode is unavailable: no" in lines
    assert "\x1b" not in text


def test_the_terminal_between_cells_factory_prints_the_title(
        capsys: pytest.CaptureFixture[str]) -> None:
    from plan_widgets.ipython.cell import _text_between_cells

    view = _text_between_cells('Background agent "x\x1b[2J" finished')
    view.text("hi\n")
    view.finished("0.1 s", True)
    out = capsys.readouterr().out
    assert out.startswith('-- Background agent "x␛[2J" finished --\n')
    assert "\x1b" not in out


def test_an_open_list_moves_a_running_agents_time_on(comms: Comms,
                                                     displays: list[Handle]) -> None:
    """Agent events come only when an agent uses a tool: while the list is open and an agent
    runs, its elapsed time moves once a second all the same."""
    from plan_widgets.widgets import ControlBar

    async def main() -> tuple[str, str]:
        s = _session()
        bar = ControlBar(s)
        s.state.agents = (_record(id="t1", tool_use_id="a1", started=time.time() - 5),)
        bar.refresh()
        bar.agents_panel.button.click()
        info = bar.agents_panel.list.children[0].children[0]
        before = _text(info.value)
        await asyncio.sleep(2.2)
        return before, _text(info.value)

    before, after = run(main())
    assert " 5 s" in before and (" 7 s" in after or " 8 s" in after), (before, after)


# -- issue 31: an agent's result is its report; a stopped agent says so once ---------------------
HAND_BACK = (  # the CLI's Agent result (2.1.332, measured), framed for the model
    "<tools-used-before-summary>Write</tools-used-before-summary>\n  \n[Subagent hand-back] The "
    "text below is the final report of a subagent this session delegated to. It is model "
    "output, NOT a message from the user. The report follows:\n  Subagent: both files "
    "**written**.\n  - a.txt\nagentId: a1ea204b965333cb4 (use SendMessage with to: "
    "'a1ea204b965333cb4', summary: '<5-10 word recap>' to continue this agent)\n<usage>"
    "subagent_tokens: 2835\ntool_uses: 2\nduration_ms: 398</usage>")
LAUNCHED = (
    "Async agent launched successfully. (This tool result is internal metadata — never quote "
    "or paste any part of it, including the agentId below, into a user-facing reply.)\n"
    "agentId: ab33119158d06dcd5 (internal ID - do not mention to user. Use SendMessage with "
    "to: 'ab33119158d06dcd5', summary: '<5-10 word recap>' to continue this agent.)\nThe "
    "agent is working in the background.")


def test_an_agents_result_is_its_report_and_a_stopped_agent_says_so_once(
        comms: Comms, displays: list[Handle]) -> None:
    async def main() -> Any:
        view = _view()
        view.tool_started("a1", "Agent", {"description": "Two files", "prompt": "go"})
        view.tool_finished("a1", HAND_BACK, False)
        view.tool_started("a2", "Agent", {"description": "Slow research", "prompt": "go",
                                          "run_in_background": True})
        view.tool_finished("a2", LAUNCHED, False)
        view.agent_updated("a2", _record(id="task-2", tool_use_id="a2", status="killed",
                                         description="Slow research", summary="Slow research",
                                         ended=time.time(), duration_ms=29_000))
        return view

    view = run(main())
    one = _outputs_html(view.nested.blocks["a1"].box)
    assert "Subagent: both files <strong>written</strong>." in one and "<li>a.txt</li>" in one
    for framing in ("hand-back", "agentId", "SendMessage", "usage", "tools-used", "model"):
        assert framing not in one, framing
    two = _text(_outputs_html(view.nested.blocks["a2"].box))
    assert "Started in the background" in two and "internal" not in two and "agentId" not in two
    assert '✗ ↳ Agent "Slow research" · stopped · 3 tools · 1.2k tokens · 29 s' in two
    assert "killed" not in two and two.count("Slow research") == 1
