"""Tab completion in ``%%claude`` cells, through IPython's own completer.

One matcher (IPython's matcher API v2) registered at ``%load_ext``: it answers only in a
``%%claude`` cell, so JupyterLab, Notebook 7 and terminal IPython all get it from the kernel's
``complete_request``. On the ``%%claude`` line: the magic's options, the values of ``--mode``,
``--model``, ``--effort`` and ``--session``, and paths after ``--cwd``, ``--add-dir`` and
``--scripted``; in the prompt: ``/`` commands and skills (the
session's, as its CLI reported them, else the project's files), ``@`` paths under the
session's working folder. It answers from what is known: it sends nothing to a CLI, starts
none, and lists at most :data:`MOST` entries of a folder.
"""

from __future__ import annotations

import os
import re
from typing import Any

from IPython.core.completer import SimpleCompletion, context_matcher

MOST = 200
"""Entries of one folder listed at most (a huge folder never stalls the editor)."""
MODELS = ("opus", "sonnet", "haiku", "default")
"""Model aliases the CLI takes (its own list, when it reported one, comes first)."""
_FRAGMENT = re.compile(r"(?:^|\s)([/@][^\s]*|-[-\w]*)$")


@context_matcher(identifier="plan_widgets.claude", priority=100)
def claude_matcher(context: Any) -> dict[str, Any]:
    """Completions for the word before the cursor in a ``%%claude`` cell (else nothing)."""
    lines = context.full_text.split("\n")
    if not lines or not re.match(r"%%claude(\s|$)", lines[0]):
        return {"completions": [], "suppress": False}
    before = lines[context.cursor_line][: context.cursor_position]
    try:
        fragment, found = _complete(lines[0], before, context.cursor_line == 0)
    except Exception:  # completion must never break the editor
        fragment, found = "", []
    return {"completions": [SimpleCompletion(t, type=kind) for t, kind in found],
            "matched_fragment": fragment, "suppress": bool(found), "ordered": True}


def _complete(magic_line: str, before: str, on_magic_line: bool
              ) -> tuple[str, list[tuple[str, str]]]:
    words = before.split()
    if on_magic_line:
        ends_in_space = before.endswith(" ")
        prev = words[-1] if ends_in_space and words else (words[-2] if len(words) > 1 else "")
        word = "" if ends_in_space else (words[-1] if words else "")
        if prev in ("--cwd", "--add-dir", "--scripted"):  # a path, from the kernel's folder
            return word, [(p, "path") for p in _paths(os.getcwd(), word)]
        values = _values(prev, magic_line)
        if values is not None:
            return word, [(v, "value") for v in values if v.startswith(word)]
        if word.startswith("-"):
            return word, [(o, "option") for o in _options() if o.startswith(word)]
        return "", []
    m = _FRAGMENT.search(before)
    if m is None:
        return "", []
    fragment = m.group(1)
    session = _session(magic_line)
    if fragment.startswith("/"):
        return fragment, [(f"/{c.name}", "skill" if c.skill else "command")
                          for c in _offered(session) if f"/{c.name}".startswith(fragment)]
    if fragment.startswith("@"):
        return fragment, [("@" + p, "path") for p in _paths(_cwd(session, magic_line),
                                                             fragment[1:])]
    return "", []


def _options() -> list[str]:
    from .magics import ClaudeMagics

    parser = ClaudeMagics.claude.parser
    return sorted({o for a in parser._actions for o in a.option_strings if o.startswith("--")})


def _values(option: str, magic_line: str) -> list[str] | None:
    from ..model.agent_options import EFFORTS
    from ..model.options import RESTING_MODES

    if option == "--mode":
        return list(RESTING_MODES)
    if option in ("--model", "--plan-model"):
        return _models(_session(magic_line))
    if option == "--effort":
        return list(EFFORTS)
    if option == "--session":
        from . import registry

        return sorted(registry.sessions())
    return None


def _session(magic_line: str) -> Any:
    from . import registry

    m = re.search(r"--session[ =](\S+)", magic_line)
    return registry.get(m.group(1) if m else "default")


def _models(session: Any) -> list[str]:
    info = getattr(getattr(session, "client", None), "server_info", None) or {}
    reported = [str(m.get("value")) for m in info.get("models") or []
                if isinstance(m, dict) and m.get("value")]
    return list(dict.fromkeys([*reported, *MODELS]))


def _offered(session: Any) -> list[Any]:
    from ..agent.commands import from_files, offered

    if session is not None:
        return offered(session)
    return from_files(None)


def _cwd(session: Any, magic_line: str) -> str:
    m = re.search(r"--cwd[ =](\S+)", magic_line)
    if m:
        return os.path.expanduser(m.group(1))
    return getattr(getattr(session, "options", None), "cwd", None) or os.getcwd()


def _paths(cwd: str, typed: str) -> list[str]:
    """Paths under ``cwd`` that start with ``typed`` (folders end in ``/``)."""
    folder, _, start = typed.rpartition("/")
    base = os.path.join(cwd, folder)
    out: list[str] = []
    try:
        with os.scandir(base) as entries:
            for i, e in enumerate(entries):
                if i >= MOST * 5 or len(out) >= MOST:
                    break
                if not e.name.startswith(start) or (e.name.startswith(".") and not start):
                    continue
                path = f"{folder}/{e.name}" if folder else e.name
                out.append(path + ("/" if e.is_dir() else ""))
    except OSError:
        return []
    return sorted(out)


def register(ip: Any) -> None:
    """Add the matcher to the shell's completer (once)."""
    completer = getattr(ip, "Completer", None)
    if completer is not None and claude_matcher not in completer.custom_matchers:
        completer.custom_matchers.append(claude_matcher)


def unregister(ip: Any) -> None:
    completer = getattr(ip, "Completer", None)
    if completer is not None and claude_matcher in completer.custom_matchers:
        completer.custom_matchers.remove(claude_matcher)
