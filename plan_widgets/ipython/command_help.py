"""What each ``%claude`` command is for: the one source of ``%claude --help`` and ``%claude?``.

A table of plain strings, so the magic's docstring (``%claude?``) is built from it when the
extension loads without importing the handlers (:mod:`plan_widgets.ipython.commands` costs
about 0.9 s of imports, the magics 0.1 s). :mod:`~plan_widgets.ipython.commands` refuses to
load if its handler table and this one name different commands, so neither help can miss one.
"""

from __future__ import annotations

import textwrap

# name: (its arguments, what it does); in the order --help lists them
HELP: dict[str, tuple[str, str]] = {
    "status": ("", "the session's state, mode, model, pending decision, agent options"),
    "interrupt": ("", "interrupt the running turn (a pending decision is cancelled)"),
    "stop": ("", "end the session (the CLI exits; %claude resume continues it)"),
    "plan": ("on|off", "enter or leave plan mode live"),
    "sessions": ("", "sessions of this kernel, and those found in the event logs; a plan "
                 "approved to start fresh names the conversation it came from and the one it "
                 "went on in"),
    "history": ("", "the same list as sessions"),
    "resume": ("[ID] [--scripted FILE]",
               "continue a session after a restart (default: the newest in the logs): the "
               "CLI reconnects with its own transcript, the markers, plans and cost come back "
               "from the log, and a decision that was still pending shows as expired (it can "
               "no longer be answered)"),
    "log": ("[ID]", "a session's events as a table (default: this kernel's session)"),
    "cost": ("[ID]", "cost and token totals, from the log (they survive restarts)"),
    "plans": ("[ID] [--against ID] [--all] [--status S] [--text W]",
              "the project's kept plans, across its sessions, newest first (the newest 20; "
              "--all: every one; --status proposed|sent-back|approved|handed-over|superseded|"
              "expired|cancelled; --text: containing these words); with a plan's ID: that plan, "
              "read-only, with its Changes against another (--against ID); with a session's "
              "ID: that session's approved plans. %%claude --from-plan ID carries one out"),
    "context": ("", "how full the context window is, by category (after the last turn), and "
                "when the conversation was last compacted"),
    "compact": ("[INSTRUCTIONS]", "compact the conversation now (as /compact in a cell); the "
                "turn shows the sizes before and after"),
    "mcp": ("", "the session's MCP servers, their status and errors"),
    "agents": ("", "the session's subagents: running first, with elapsed time, last tool, "
               "tokens and, once ended, their result summary"),
    "commands": ("", "the slash commands and skills the CLI offers: argument hint, where each "
                 "comes from (built-in, bundled, project, user, a plugin)"),
    "tools": ("", "the notebook's functions the agent can call (@plan_widgets.tool)"),
    "policy": ("", "the administrator's policy (forbidden modes, spending cap, denied tools) "
               "and this kernel's limits (idle timeout, live CLIs)"),
    "rewind": ("[TURN] [--yes]",
               "put back the files the agent's Write/Edit tools changed since TURN began "
               "(default: the last turn that changed files); lists them first, then asks to "
               "confirm (--yes: at once)"),
}

_HEAD = "usage: %claude COMMAND [ARGS] [--session NAME]"
_TAIL = """ID is a session id from %claude sessions (its first characters are enough), or for
plans a kept plan's id from %claude plans.

Event logs: one JSONL file per session, <log dir>/<session id>.jsonl, appended as events
happen (secrets redacted). The log dir is %config ClaudeMagics.log_dir, else the
PLAN_WIDGETS_LOG_DIR environment variable, else <cwd>/.plan_widgets/sessions. Kept plans:
<log dir>/plans/<plan id>.md (the text as proposed, never rewritten) and <plan id>.json.
%%claude --help lists the cell magic's options."""
_INDENT = " " * 22  # where each command's words start, as argparse lays out its help


def usage() -> str:
    """``%claude --help``: every command of :data:`HELP`, its arguments and what it does."""
    lines = [_HEAD, "", "commands:"]
    for name, (args, text) in HELP.items():
        head = f"  {name} {args}".rstrip()
        wrapped = textwrap.wrap(text, 92, initial_indent=_INDENT, subsequent_indent=_INDENT,
                                break_on_hyphens=False)
        if len(head) < len(_INDENT) - 1:
            wrapped[0] = head.ljust(len(_INDENT)) + wrapped[0].lstrip()
        else:
            lines.append(head)
        lines.extend(wrapped)
    return "\n".join([*lines, "", _TAIL])


def synopsis() -> str:
    """``%claude?``: the commands on a few lines, each with its arguments."""
    forms = [f"{name} {args}".rstrip() for name, (args, _) in HELP.items()]
    listed = textwrap.fill(" | ".join(forms), 88, initial_indent="%claude ",
                           subsequent_indent="    ")
    return f"{listed}\n[--session NAME]. Each one explained: ``%claude --help``."


def check(names: list[str]) -> None:
    """Fail at import when the handler table and :data:`HELP` name different commands."""
    if list(names) != list(HELP):
        missing = sorted(set(names) ^ set(HELP)) or ["(their order)"]
        raise RuntimeError(f"%claude commands and their help differ: {', '.join(missing)}")
