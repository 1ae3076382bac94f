"""Issue 34, fast: agent options sorted and merged, commands read from the CLI's report, the
notebook's functions as tools (bounded), and completion words."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from plan_widgets.agent import commands, sdk_options
from plan_widgets.ipython import obtain as merge
from plan_widgets.ipython.kernel import user_tools
from plan_widgets.model.errors import OptionError, SessionError


def test_the_sdks_names_are_sorted_and_owned_ones_set_aside() -> None:
    own = merge.from_python({"effort": "high", "permission_mode": "acceptEdits",
                             "disallowed_tools": ["WebFetch"], "hooks": {"Stop": []},
                             "scripted": "s.yaml"})
    assert own["agent"] == {"effort": "high"}
    assert own["mode"] == "acceptEdits" and own["denied_tools"] == ["WebFetch"]
    assert own["set_aside"] == ("option hooks set aside: the product's PreToolUse screen owns "
                                "SDK hooks; put yours in .claude/settings.json (the CLI runs "
                                "them)",)
    with pytest.raises(OptionError, match="unknown option 'max_turn': did you mean 'max_turns'"):
        merge.from_python({"max_turn": 3})


def test_layers_merge_name_by_name() -> None:
    got = merge.merged({"model": "a", "agent": {"effort": "low", "max_turns": 2}},
                       {"model": None, "agent": {"effort": "high"}}, {"mode": "plan"})
    assert got == {"model": "a", "mode": "plan", "agent": {"effort": "high", "max_turns": 2}}


def test_the_cells_flags_are_agent_options() -> None:
    args = argparse.Namespace(model=None, plan_model=None, mode=None, cwd=None, scripted=None,
                              approval_timeout=None, resume=None, effort="max",
                              add_dir=["a", "b"], allowed_tools=["Read,Grep", "Bash(git:*)"],
                              append_system_prompt=None)
    assert merge.from_cell(args)["agent"] == {
        "effort": "max", "add_dirs": ["a", "b"], "allowed_tools": ["Read", "Grep", "Bash(git:*)"]}


def test_the_products_server_and_flags_win() -> None:
    from plan_widgets.model.agent_options import checked

    got, notes = checked({"mcp_servers": {"kernel": {}, "db": {"command": "x"}},
                          "extra_args": {"replay-user-messages": None, "debug": None}})
    assert got == {"mcp_servers": {"db": {"command": "x"}}, "extra_args": {"debug": None}}
    assert len(notes) == 2 and "kernel tools' server" in notes[0]


def test_an_option_the_sdk_lacks_names_its_version() -> None:
    with pytest.raises(SessionError, match="not known to the installed claude-agent-sdk 9.9"):
        sdk_options.passed({"warp_speed": 9}, {"effort"}, "claude-agent-sdk 9.9", dict)
    assert sdk_options.system_prompt(None, ["kernel", "mine"]) == {
        "type": "preset", "preset": "claude_code", "append": "kernel\n\nmine"}
    assert sdk_options.system_prompt(None, [None]) is None  # the SDK's default, untouched


class _Client:
    server_info = {"commands": [
        {"name": "greet", "description": "Greet (project)", "argumentHint": "NAME",
         "descriptionEnding": " (project)"},
        {"name": "compact", "description": "Summarize", "argumentHint": "", "builtin": True},
        {"name": "lint", "description": "Lint (my-plugin)", "descriptionEnding": " (my-plugin)"}]}
    reported = {"skills": ["lint"], "slash_commands": ["greet", "compact", "lint"]}


class _Session:
    name = "t"
    client = _Client()


def test_commands_come_from_the_clis_report() -> None:
    got = {c.name: c for c in commands.offered(_Session())}
    assert got["greet"] == commands.Command("greet", "Greet", "NAME", "project", False)
    assert got["compact"].source == "built-in" and got["lint"].skill
    assert got["lint"].source == "my-plugin"
    known = commands.names(_Session())
    assert commands.unknown_command("/greet Ada", known) is None
    assert commands.unknown_command("/tmp/data.csv explain", known) == "tmp"
    assert commands.unknown_command("explain /tmp", known) is None


def test_a_notebook_function_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(seconds: float = 5.0) -> str:
        """Sleeps in Python."""
        import time

        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        return "woke"

    t = user_tools._make(slow, "slow", False)
    assert t.schema["properties"] == {"seconds": {"default": 5.0, "type": "number"}}
    assert t.description == "Sleeps in Python."
    monkeypatch.setattr(user_tools, "SECONDS", 0.3)
    with pytest.raises(user_tools.ToolFailure, match="slow timed out after 0.3 s"):
        asyncio.run(user_tools.call(t, {}))
    assert asyncio.run(user_tools.call(t, {"seconds": 0})) == "woke"
    with pytest.raises(OptionError, match="'run_code' is a kernel tool's name"):
        user_tools.tool(name="run_code")(slow)


def test_a_figure_is_an_image() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2])
    got = user_tools.result(fig)
    plt.close(fig)
    assert got["mime"] == "image/png" and got["image"].startswith("iVBOR")
