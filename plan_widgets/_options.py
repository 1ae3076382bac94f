"""Session options, credentials and the CLI's environment."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

RESTING_MODES = ("default", "acceptEdits", "bypassPermissions", "dontAsk", "auto")
ALL_MODES = (*RESTING_MODES, "plan")
DEFAULT_APPROVAL_TIMEOUT = 1800.0

NO_CREDENTIALS = (
    "No Claude credentials found. Either set ANTHROPIC_API_KEY (or run `claude login` in a "
    "terminal), or run offline on a scripted model: %%claude --scripted SCRIPT.yaml"
)


class OptionError(ValueError):
    """A user mistake in the options: shown as one line, never a traceback."""


class SessionError(RuntimeError):
    """The session cannot do what was asked; the message is for the user."""


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

    def validated(self) -> SessionOptions:
        """Check values a user typed; raise OptionError with one clear line."""
        if self.mode not in RESTING_MODES:
            raise OptionError(
                f"unknown mode {self.mode!r}: choose one of {', '.join(RESTING_MODES)}"
            )
        cwd = str(Path(self.cwd or os.getcwd()).expanduser().resolve())
        if not Path(cwd).is_dir():
            raise OptionError(f"--cwd {self.cwd!r} is not a directory")
        scripted = self.scripted
        if scripted is not None:
            p = Path(scripted).expanduser()
            if not p.is_absolute():
                p = Path(os.getcwd()) / p
            if not p.is_file():
                raise OptionError(f"--scripted {scripted!r}: no such file")
            scripted = str(p.resolve())
        check_timeout(self.approval_timeout)
        return replace(self, cwd=cwd, scripted=scripted)

    def with_(self, **changes: Any) -> SessionOptions:
        """A copy with some fields changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def check_timeout(seconds: float) -> float:
    """An approval timeout: a finite, positive number of seconds (every wait ends)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise OptionError(
            f"--approval-timeout {seconds!r}: give a positive number of seconds (every wait "
            "for you ends; the default is 1800)"
        )
    return float(seconds)


def has_credentials(env: dict[str, str] | None = None) -> bool:
    """Whether the CLI will find some way to reach a model: a key, a token, a login, a proxy."""
    env = {**os.environ, **(env or {})}
    for key in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
    ):
        if env.get(key):
            return True
    home = Path(env.get("HOME") or Path.home())
    config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    if (config / ".credentials.json").is_file():
        return True
    for cfg in (home / ".claude.json", config / ".claude.json"):
        try:
            data = json.loads(cfg.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and (data.get("oauthAccount") or data.get("primaryApiKey")):
            return True
    return False
