"""What a session is started with (:class:`SessionOptions`), and the checks of what a user
typed: modes, the approval timeout, paths. (Credentials: ``agent/credentials.py``.)"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .agent_options import checked as checked_agent
from .errors import OptionError

RESTING_MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk", "auto")
ALL_MODES = (*RESTING_MODES, "plan")
DEFAULT_APPROVAL_TIMEOUT = 1800.0


@dataclass(frozen=True)
class SessionOptions:
    """What a session is started with. ``mode`` is the resting permission mode."""

    name: str = "default"
    model: str | None = None
    plan_model: str | None = None
    mode: str = "default"
    cwd: str | None = None
    scripted: str | None = None
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    log_dir: str | None = None
    resume: str | None = None
    plan: bool = False
    env: dict[str, str] = field(default_factory=dict)
    connect_timeout: float = 90.0
    cli_path: str | None = None
    """The Claude Code CLI to run (None: the one bundled with claude-agent-sdk)."""
    checkpointing: bool = True
    """The CLI keeps file checkpoints, so a turn's files can be rewound. On by default: it
    cost no measurable time or memory per turn (docs/benchmarks.md), only disk (about one copy
    of each changed file per turn, under the CLI's ``~/.claude/file-history``)."""
    kernel_tools: bool = True
    """Serve the kernel's tools (variables, history, run code, propose a cell) to the agent."""
    show_thinking: bool = True
    """Show the model's thinking as a folded line in the turn (it is logged either way)."""
    idle_timeout: float | None = None
    """Seconds without activity after which the CLI exits (None: never); the next turn
    resumes the same conversation (see ``plan_widgets.agent.idle``)."""
    forbidden_modes: tuple[str, ...] = ()
    """Modes the administrator's policy forbids (``ClaudePolicy``)."""
    max_budget_usd: float | None = None
    """The CLI stops a session that has spent this much (the SDK's ``max_budget_usd``)."""
    denied_tools: tuple[str, ...] = ()
    """Tools the CLI never runs (the SDK's ``disallowed_tools``)."""
    agent: Mapping[str, Any] = field(default_factory=dict)
    """The SDK's other agent options, by its names (``effort``, ``add_dirs``, ...), passed to
    the CLI (``model/agent_options.py``; docs/options.md)."""
    set_aside: tuple[str, ...] = ()
    """One line per option the product owns that was given and set aside (``%claude
    status`` shows them)."""

    def validated(self) -> SessionOptions:
        """Check values a user typed; raise OptionError with one clear line."""
        if self.mode not in RESTING_MODES:
            raise OptionError(
                f"unknown mode {self.mode!r}: choose one of {', '.join(RESTING_MODES)}"
            )
        check_allowed(self.mode, self.forbidden_modes)
        cwd = str(Path(self.cwd or os.getcwd()).expanduser().resolve())
        if not Path(cwd).is_dir():
            raise OptionError(f"--cwd {self.cwd!r} is not a directory: give an existing folder")
        if not os.access(cwd, os.R_OK | os.X_OK):
            raise OptionError(f"--cwd {self.cwd or cwd!r} cannot be read (permission denied): "
                              "give a folder you can read")
        scripted = self.scripted
        if scripted is not None:
            p = Path(scripted).expanduser()
            if not p.is_absolute():
                p = Path(os.getcwd()) / p
            if not p.is_file():
                raise OptionError(f"--scripted {scripted!r}: no such file")
            scripted = str(p.resolve())
        check_timeout(self.approval_timeout)
        cli_path = self.cli_path
        if cli_path is not None:
            c = Path(cli_path).expanduser()
            if not c.is_file():
                raise OptionError(f"cli_path {cli_path!r}: no such file (give the path of the "
                                  "claude executable, or leave cli_path unset for the CLI "
                                  "bundled with claude-agent-sdk)")
            if not os.access(c, os.X_OK):
                raise OptionError(f"cli_path {cli_path!r} is not executable (chmod +x it, or "
                                  "leave cli_path unset for the CLI bundled with "
                                  "claude-agent-sdk)")
            cli_path = str(c.resolve())
        agent, notes = checked_agent(self.agent)
        if agent.get("add_dirs"):
            agent["add_dirs"] = [_folder(d, "add_dirs") for d in agent["add_dirs"]]
        return replace(self, cwd=cwd, scripted=scripted, cli_path=cli_path, agent=agent,
                       set_aside=tuple(dict.fromkeys([*self.set_aside, *notes])))

    def with_(self, **changes: Any) -> SessionOptions:
        """A copy with some fields changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _folder(path: Any, option: str) -> str:
    """A folder a user named (relative: to the kernel's working folder), as a real path."""
    p = real_path(str(path))
    if not os.path.isdir(p):
        raise OptionError(f"{option} {str(path)!r} is not a directory: give an existing folder")
    return p


def check_allowed(mode: str, forbidden: tuple[str, ...]) -> None:
    """A mode the administrator's policy forbids is one line, naming the policy."""
    if mode in forbidden:
        raise OptionError(f"mode {mode!r} is forbidden by the administrator's policy "
                          "(%claude policy shows it): choose another --mode")


def check_timeout(seconds: float) -> float:
    """An approval timeout: a finite, positive number of seconds (every wait ends)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise OptionError(
            f"--approval-timeout {seconds!r}: give a positive number of seconds (every wait "
            "for you ends; the default is 1800)"
        )
    return float(seconds)


def real_path(path: str) -> str:
    """``path`` with ``~`` expanded and links resolved (as a session's options hold it)."""
    return os.path.realpath(os.path.expanduser(path))
