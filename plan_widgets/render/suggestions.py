"""What one of the CLI's suggested permission updates does, in a person's words (issue 42,
point 6).

With a tool's permission request the CLI sends ``suggestions``: the updates its own dialog
offers as "Yes, and don't ask again …" (a rule, a folder, a mode), each with where it is kept
(``destination``). The card offers each one on its own, so a person takes one without the
others; the CLI applies only what comes back in ``PermissionResultAllow(updated_permissions=…)``
(measured with CLI 2.1.332: a rule handed back alone, and the next identical call was not
asked again; the mode suggested with it stayed as it was). Before, one "Always allow" applied
all of them, in the CLI's words ("allow Bash(rm -rf old_banners) (localSettings); add
directories …; switch to mode acceptEdits (session)").
"""

from __future__ import annotations

from typing import Any

from .paths import home_short

KEPT = {
    "session": "for this session only",
    "cliArg": "for this session only",
    "localSettings": "from now on in this project, for you (kept in .claude/settings.local.json)",
    "projectSettings": "from now on in this project, for everyone "
                       "(kept in .claude/settings.json)",
    "userSettings": "from now on in all your projects (kept in ~/.claude/settings.json)",
}
"""Where an update is kept, and so for how long: the CLI's ``destination`` values."""
MODES = {
    "acceptEdits": "accept every file edit without asking (mode Accept edits)",
    "bypassPermissions": "run every tool without asking (mode Bypass permissions)",
    "default": "ask before each tool call (mode Manual)",
    "plan": "only plan, change nothing (mode Plan)",
    "dontAsk": "deny what is not allowed already, without asking (mode Don't ask)",
}


def _get(s: Any) -> Any:
    return s.get if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))


def _rule(r: Any) -> str:
    g = _get(r)
    tool = str(g("tool_name") or g("toolName") or "?")
    content = g("rule_content") or g("ruleContent")
    if not content:
        return f"every {tool} call"
    content = str(content)
    if tool == "Bash":
        if content.endswith(":*"):
            return f"commands starting with “{content[:-2]}”"
        return f"the command “{content}”"
    if tool in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit"):
        return f"{tool} of “{content}”"
    return f"{tool} “{content}”"


def suggestion_text(s: Any) -> str:
    """One suggested update in plain words: what it will allow, where it is kept and so for
    how long ("don't ask again for the command “ls”, for this session only")."""
    g = _get(s)
    kind = str(g("type", "") or "")
    where = KEPT.get(str(g("destination") or ""), "")
    tail = f", {where}" if where else ""
    if kind == "setMode":
        mode = str(g("mode") or "")
        return f"{MODES.get(mode, f'switch to mode {mode}')}{tail}"
    if kind in ("addRules", "replaceRules"):
        rules = " and ".join(_rule(r) for r in g("rules") or []) or "these rules"
        verb = str(g("behavior") or "allow")
        said = {"allow": "don't ask again for", "deny": "always refuse",
                "ask": "always ask for"}.get(verb, f"{verb}")
        return f"{said} {rules}{tail}"
    if kind == "addDirectories":
        dirs = ", ".join(f"“{home_short(str(d))}”" for d in g("directories") or [])
        return f"let it work in {dirs} too{tail}"
    if kind == "removeDirectories":
        dirs = ", ".join(f"“{home_short(str(d))}”" for d in g("directories") or [])
        return f"stop letting it work in {dirs}{tail}"
    return kind or repr(s)
