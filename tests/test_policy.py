"""The administrator's policy and settings from config files, checked one by one (no kernel)."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from plan_widgets.agent.idle import budget_left
from plan_widgets.ipython.policy import ClaudePolicy, checked
from plan_widgets.model.errors import OptionError
from plan_widgets.model.options import SessionOptions


def test_wrong_settings_are_named_and_left_at_their_defaults() -> None:
    c = Config()
    c.ClaudePolicy.forbidden_modes = ["bypassPermissions", "yolo"]
    c.ClaudePolicy.max_budget_usd = "lots"
    c.ClaudePolicy.denied_tools = ["WebFetch"]
    c.ClaudePolicy.no_such_thing = 1
    policy, problems = checked(ClaudePolicy, c)
    assert policy.forbidden_modes == ["bypassPermissions"]
    assert policy.max_budget_usd is None  # the default
    assert policy.denied_tools == ["WebFetch"]
    assert any("max_budget_usd = 'lots' is not valid" in p for p in problems), problems
    assert any("unknown mode 'yolo'" in p for p in problems), problems
    assert any("no_such_thing: no such setting" in p for p in problems), problems
    assert len(problems) == 3


def test_what_a_session_asks_for_is_held_to_the_policy() -> None:
    policy = ClaudePolicy(forbidden_modes=["bypassPermissions"], max_budget_usd=5.0,
                          denied_tools=["WebFetch"])
    got = policy.session_options({"max_budget_usd": 9.0, "denied_tools": ("Bash",),
                                  "mode": "acceptEdits"})
    assert got == {"mode": "acceptEdits", "max_budget_usd": 5.0,
                   "denied_tools": ("Bash", "WebFetch"),
                   "forbidden_modes": ("bypassPermissions",)}
    assert policy.session_options({"max_budget_usd": 1.0})["max_budget_usd"] == 1.0
    assert ClaudePolicy().session_options({})["max_budget_usd"] is None


def test_a_forbidden_mode_is_one_line_naming_the_policy() -> None:
    with pytest.raises(OptionError, match="forbidden by the administrator's policy"):
        SessionOptions(mode="bypassPermissions",
                       forbidden_modes=("bypassPermissions",)).validated()


def test_a_new_cli_process_gets_what_is_left_of_the_cap() -> None:
    assert budget_left(None, 3.0) is None
    assert budget_left(5.0, 1.5) == 3.5
    assert budget_left(5.0, 7.0) == 0.0
