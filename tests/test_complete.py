"""Tab completion in a ``%%claude`` cell without a kernel: the matcher asked as IPython's
completer asks it, on a huge folder. (Through a real kernel: tests/test_e2e_options.py; in
terminal IPython: tests/test_e2e_terminal_pty.py; in the browsers: test_browser_complete.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.completer import CompletionContext

from plan_widgets.ipython import complete


def ask(text: str) -> list[str]:
    """The completions for the end of ``text`` (a cell), as IPython's completer asks."""
    lines = text.split("\n")
    context = CompletionContext(token="", full_text=text, cursor_position=len(lines[-1]),
                                cursor_line=len(lines) - 1, limit=None)
    return [c.text for c in complete.claude_matcher(context)["completions"]]


@pytest.fixture
def huge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kernel's folder holding a folder of 1,000 files."""
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(1000):
        (folder / f"f{i:04d}.csv").touch()
    monkeypatch.chdir(tmp_path)
    return folder


def test_a_huge_folder_lists_at_most_200_entries(huge: Path) -> None:
    assert complete.MOST == 200  # docs/options.md names the number
    for cell in ("%%claude --cwd big/", "%%claude --scripted big/", "%%claude --cwd big\n@"):
        found = ask(cell)
        assert len(found) == 200, (cell, len(found))
        assert all(f.lstrip("@").startswith("big/f") or f.startswith("@f") for f in found)
    # what is typed narrows it, within the cap
    assert ask("%%claude --cwd big/f00") == [f"big/f00{i:02d}.csv" for i in range(100)]


def test_only_a_claude_cell_is_completed(huge: Path) -> None:
    assert ask("%%claude --cwd b") == ["big/"]
    assert ask("x = 1\n%%claude --cwd b") == []
    assert ask("%%claudex --cwd b") == []
