"""``%claude`` lines, parsed: every mistake is the one line it always was (no kernel, no CLI).

The commands are a table of handlers behind argparse; these pin what a user reads for each
kind of mistake, and that ``%%claude`` cells are rewritten into a call that exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from plan_widgets import model as ev
from plan_widgets.ipython import commands as _commands
from plan_widgets.ipython import registry as _registry
from plan_widgets.ipython.magics import ClaudeMagics, transform_cell
from plan_widgets.ipython.usage import Help, Usage
from plan_widgets.model.errors import OptionError
from plan_widgets.store import LOG_DIR_ENV

TOP = "usage: %claude COMMAND [ARGS] [--session NAME]"


class Closed:
    """A session of this kernel that was stopped."""

    def __init__(self) -> None:
        self.session_id = "live-1"
        self.name = "default"
        self.closed = True
        self.dead = None
        self.state = ev.fold([])
        self.pending = None
        self.busy = False
        self.status = "closed"


class Config:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = str(log_dir)
        self.scripted = None
        self.approval_timeout = 60.0


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    monkeypatch.setattr(_registry, "_sessions", {})


def run(tmp_path: Path, line: str) -> str:
    """What the line says: ``Help: ...`` (printed, the cell is ok), ``Usage: ...`` or
    ``OptionError: ...`` (one line each: the magic fails the cell with it)."""
    try:
        _commands.run(Config(tmp_path), line)
    except (Help, Usage, OptionError) as e:
        return f"{type(e).__name__}: {str(e).replace(str(tmp_path), '<D>')}"
    return "ok"


@pytest.mark.parametrize("line, said", [
    ("", f"Help: {_commands.USAGE}"),
    ("help --session x", f"Help: {_commands.USAGE}"),
    ("--session", "Usage: %claude: --session needs a value"),
    ("log 'unclosed", "Usage: %claude: No closing quotation"),
    ("frobnicate", "Usage: %claude: unknown command 'frobnicate' (see %claude --help)"),
    ("stat", "Usage: %claude: unknown command 'stat' (did you mean 'status'? see %claude "
             "--help)"),
    ("--bogus", "Usage: %claude: unknown command '--bogus' (see %claude --help)"),
    ("sessions x", "Usage: %claude sessions: unexpected 'x' (see %claude --help)"),
    ("sessions --x", "Usage: %claude sessions: unexpected '--x' (see %claude --help)"),
    ("log a b", "Usage: usage: %claude log [ID] [--session NAME]"),
    ("plans a b", "Usage: usage: %claude plans [ID] [--against ID] [--all] [--status STATUS] "
                  "[--text WORDS] [--session NAME]"),
    ("plans --status", "Usage: usage: %claude plans [ID] [--against ID] [--all] "
                       "[--status STATUS] [--text WORDS] [--session NAME]"),
    ("plans --status done", "OptionError: no plan status 'done' (one of: proposed, sent-back, "
                            "approved, handed-over, superseded, expired, cancelled)"),
    ("plans --against abc", "OptionError: %claude plans: --against needs the ID of the plan "
                            "to open first (usage: %claude plans [ID] [--against ID] [--all] "
                            "[--status STATUS] [--text WORDS] [--session NAME])"),
    ("log -h", "OptionError: no session '-h' in the event logs (<D>); "
               "%claude sessions lists them"),
    ("cost --session a b", "OptionError: no session 'b' in the event logs (<D>); "
                           "%claude sessions lists them"),
    ("resume a b", "Usage: usage: %claude resume [ID] [--scripted FILE] [--session NAME]"),
    ("resume -x", "Usage: usage: %claude resume [ID] [--scripted FILE] [--session NAME]"),
    ("resume --scripted x --bogus",
     "Usage: usage: %claude resume [ID] [--scripted FILE] [--session NAME]"),
    ("resume --scripted", "Usage: %claude: --scripted needs a value"),
    ("resume aaaa --scripted", "Usage: %claude: --scripted needs a value"),
    ("status x", "OptionError: no session 'default' yet: run a %%claude cell first"),
    ("plan maybe", "OptionError: no session 'default' yet: run a %%claude cell first"),
])
def test_each_mistake_is_what_it_always_said(tmp_path: Path, line: str, said: str) -> None:
    assert run(tmp_path, line) == said


@pytest.mark.parametrize("line, said", [
    ("status x", "Usage: %claude status: unexpected 'x' (see %claude --help)"),
    ("stop now", "Usage: %claude stop: unexpected 'now' (see %claude --help)"),
    ("plan", "Usage: usage: %claude plan on|off"),
    ("plan maybe", "Usage: usage: %claude plan on|off"),
    ("plan on off", "Usage: usage: %claude plan on|off"),
    ("plan on", "OptionError: default is closed: cannot turn plan mode on "
                "(%claude resume live-1 continues it)"),
    ("interrupt", "OptionError: default is closed: nothing to interrupt "
                  "(%claude resume live-1 continues it)"),
])
def test_a_live_session_is_found_before_the_arguments_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, said: str) -> None:
    monkeypatch.setattr(_registry, "_sessions", {"default": Closed()})
    assert run(tmp_path, line) == said


def test_every_command_is_in_the_help() -> None:
    listed = [line.split()[0] for line in _commands.USAGE.split("commands:\n")[1].splitlines()
              if line.startswith("  ") and line[2] != " "]
    assert listed == list(_commands.COMMANDS)


def test_every_command_is_in_the_line_magics_docstring() -> None:
    """``%claude?`` shows this docstring: every command of the handler table, in its order."""
    doc = ClaudeMagics.claude_line.__doc__
    assert doc
    said = re.findall(r"(?:%claude |\| )([a-z]+)", " ".join(doc.split()))
    assert said == list(_commands.COMMANDS), doc
    assert "%claude --help" in doc


def test_a_command_without_help_stops_the_import() -> None:
    check = _commands.command_help.check
    check(list(_commands.COMMANDS))
    with pytest.raises(RuntimeError, match="undo"):
        check([*_commands.COMMANDS, "undo"])
    with pytest.raises(RuntimeError, match="policy"):
        check([c for c in _commands.COMMANDS if c != "policy"])


def test_every_setting_is_in_the_cell_magics_docstring() -> None:
    """``%%claude?`` and ``%%claude --help``: every ``%config ClaudeMagics`` setting."""
    doc = " ".join((ClaudeMagics.claude.__doc__ or "").split())
    settings = doc.split("one of: ")[1].split(". More")[0].split(", ")
    assert settings == sorted(ClaudeMagics.class_trait_names(config=True))
    assert {"show_thinking", "cli_path", "unattended", "rules", "agent_options"} <= set(settings)


def test_a_claude_cell_becomes_a_call_that_exists() -> None:
    [code] = transform_cell(["%%claude --plan\n", "Do it\n"])
    assert code.startswith("await __import__(")
    call = code[len("await "):]
    run_cell: Any = eval(call.split(".run_cell(")[0] + ".run_cell")
    assert run_cell.__name__ == "run_cell"
    assert call.endswith(".run_cell('--plan', 'Do it\\n')\n")
    assert transform_cell(["%%claudex\n", "x\n"]) == ["%%claudex\n", "x\n"]
