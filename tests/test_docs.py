"""The README is a user's first page, and what it points to exists; the configuration reference
the docs site generates lists every setting. (The site itself is built by ``scripts/test`` with
warnings as errors: a broken internal link fails there.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from plan_widgets.ipython.magics import ClaudeMagics
from plan_widgets.ipython.policy import ClaudePolicy

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def test_the_readme_is_one_short_page_for_users() -> None:
    lines = README.splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:40])
    assert "pip install plan_widgets" in first_screen
    for way in ("ANTHROPIC_API_KEY", "claude auth login", "ANTHROPIC_BASE_URL"):
        assert way in README, way


def test_the_readme_names_the_two_set_up_commands() -> None:
    contributing = README.split("## Contributing", 1)[1]
    assert "./scripts/demo" in contributing and "./scripts/test" in contributing
    assert ".ci/run" in contributing


def test_every_relative_link_of_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if "://" not in link]
    assert len(relative) >= 10
    for link in relative:
        assert (REPO / link).exists(), link


def _reference() -> object:
    path = REPO / "docs" / "_ext" / "plan_widgets_reference.py"
    spec = importlib.util.spec_from_file_location("plan_widgets_reference", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_reference_lists_every_setting() -> None:
    table = _reference().config_table  # type: ignore[attr-defined]
    for cls in (ClaudeMagics, ClaudePolicy):
        rows = "\n".join(table(cls.__name__))
        listed = re.findall(rf"`{cls.__name__}\.(\w+)`", rows)
        assert sorted(listed) == sorted(cls.class_trait_names(config=True))
    magics = "\n".join(table("ClaudeMagics"))
    for name in ("show_thinking", "cli_path", "unattended", "rules", "agent_options"):
        assert f"`ClaudeMagics.{name}`" in magics
