"""The slash commands and skills a session's CLI offers, from what the CLI reported.

The CLI says them twice (measured, docs/cli.md#commands): its answer to ``initialize``
(``get_server_info()["commands"]``: name, description, ``argumentHint``, ``builtin``, and a
``descriptionEnding`` such as `` (project)`` naming where a custom one comes from), and each
turn's ``init`` message (``slash_commands``, ``skills``: names only). A client that has
neither (the test's fake, a CLI still starting) lists what was known last for the session;
before any CLI ran, the project's own ``.claude/commands`` and ``.claude/skills`` are read.
Nothing here sends a request or starts a CLI.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Command:
    name: str
    description: str = ""
    argument_hint: str = ""
    source: str = "built-in"
    """built-in, bundled (a skill shipped with the CLI), project, user, or a plugin's name."""
    skill: bool = False


_known: dict[str, list[Command]] = {}
"""The newest list per session name (for a CLI asleep or gone)."""
_ENDING = re.compile(r"\s*\(([^()]+)\)\s*$")


def offered(session: Any) -> list[Command]:
    """The commands and skills of ``session`` (live, else as last known, else from the
    project's files), sorted by name."""
    client = getattr(session, "client", None)
    info = getattr(client, "server_info", None) or {}
    reported = getattr(client, "reported", None) or {}
    if info.get("commands") or reported:
        found = _from_cli(info.get("commands") or [], reported)
        _known[session.name] = found
        return found
    return _known.get(session.name) or from_files(getattr(session.options, "cwd", None))


def _from_cli(commands: list[dict[str, Any]], reported: dict[str, Any]) -> list[Command]:
    skills = set(reported.get("skills") or ())
    out: dict[str, Command] = {}
    for c in commands:
        name = str(c.get("name") or "").lstrip("/")
        if not name:
            continue
        desc = str(c.get("description") or "")
        ending = str(c.get("descriptionEnding") or "")
        if ending and desc.endswith(ending):
            desc = desc[: -len(ending)]
        m = _ENDING.match(ending)
        source = ("built-in" if c.get("builtin") else m.group(1) if m else "bundled")
        out[name] = Command(name, desc.strip(), str(c.get("argumentHint") or ""), source,
                            name in skills)
    for name in reported.get("slash_commands") or ():  # named by init only
        out.setdefault(name, Command(name, source="?", skill=name in skills))
    return sorted(out.values(), key=lambda c: c.name)


def from_files(cwd: str | None) -> list[Command]:
    """The project's and the user's own commands and skills, from their files."""
    out: list[Command] = []
    home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    for base, source in ((Path(cwd or os.getcwd()) / ".claude", "project"), (home, "user")):
        for f in sorted((base / "commands").glob("*.md")):
            out.append(Command(f.stem, source=source))
        for f in sorted((base / "skills").glob("*/SKILL.md")):
            out.append(Command(f.parent.name, source=source, skill=True))
    return sorted({c.name: c for c in reversed(out)}.values(), key=lambda c: c.name)


def names(session: Any) -> set[str] | None:
    """The names a ``/`` prompt may start with; None if the CLI never said them."""
    client = getattr(session, "client", None)
    if getattr(client, "server_info", None) or getattr(client, "reported", None):
        return {c.name for c in offered(session)}
    known = _known.get(getattr(session, "name", ""))
    return {c.name for c in known} if known else None


def unknown_command(prompt: str, known: set[str] | None) -> str | None:
    """The command a ``/...`` prompt names, if the CLI does not offer it (None: fine, or
    not a command, or nothing known)."""
    m = re.match(r"/([\w:.-]+)", prompt.lstrip())
    if not m or known is None or m.group(1) in known:
        return None
    return m.group(1)
