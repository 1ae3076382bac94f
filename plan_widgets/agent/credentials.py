"""Whether the CLI will find credentials, and what to say when it will not."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..model.errors import OptionError

NO_CREDENTIALS = (
    "No Claude credentials found. Either set ANTHROPIC_API_KEY (or run `claude auth login` in a "
    "terminal), or run offline on a scripted model: %%claude --scripted SCRIPT.yaml"
)


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


def require_credentials(scripted: str | None, env: Mapping[str, str] | None = None) -> None:
    """Raise :class:`OptionError` (the two ways forward, in one line) unless the session runs
    on a scripted model or the CLI will find credentials."""
    if not scripted and not has_credentials(dict(env or {})):
        raise OptionError(NO_CREDENTIALS)


def private_config_dir(env: Mapping[str, str] | None = None) -> None:
    """Make the CLI's own folder (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``) readable by its
    owner only: it holds the transcripts, the plan files and any login.

    Measured (CLI 2.1.332, umask 022): the CLI makes it 0755 and its plan files 0644, so on a
    shared machine (JupyterHub with local users) every user could read everyone's plans and
    conversations. A folder of 0700 closes all of it; what the CLI writes inside stays as it
    writes it. A folder we cannot change (another owner) is left alone.
    """
    full = {**os.environ, **(env or {})}
    home = Path(full.get("HOME") or Path.home())
    config = Path(full["CLAUDE_CONFIG_DIR"]) if full.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    try:
        config.mkdir(mode=0o700, parents=True, exist_ok=True)
        if config.stat().st_mode & 0o077:
            config.chmod(0o700)
    except OSError:
        pass
