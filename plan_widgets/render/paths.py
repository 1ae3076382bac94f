"""Paths as a person reads them: the home folder written ``~``.

One rule for every form a path takes (the live card, its static copy, the terminal, the
history): a new user saw the plan file as ``/home/…/.claude/plans/…`` on the live card and
``~/.claude/plans/…`` in the saved copy of the same turn (issue 42, point 12).
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def home_short(path: str, env: Mapping[str, str] | None = None) -> str:
    """``path`` with the home folder (``env``'s ``HOME``, else this process's) written ``~``."""
    home = ((env or {}).get("HOME") or os.path.expanduser("~")).rstrip("/")
    if not home:
        return path
    if path == home:
        return "~"
    return "~" + path[len(home):] if path.startswith(home + "/") else path
