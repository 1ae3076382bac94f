"""The permission gate: every ``can_use_tool`` callback of the CLI passes through here.

Rules (see FIELD-NOTES): a plan is never auto-approved; approval names the next mode itself
(``setMode``); while plan mode is in force, any other tool the CLI asks about is refused, except
AskUserQuestion and writes to the CLI's own plan files; everything else becomes a decision the
user makes. Nothing is ever allowed without an explicit user action.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .decisions import Decision, Outcome, PlanDecision, QuestionDecision, ToolDecision

if TYPE_CHECKING:
    from .session import Session

PLAN_MODE_REFUSAL = (
    "Plan mode is on: nothing may change before the user approves a plan. Do not write, edit "
    "or run anything except the plan file. Write your plan to the plan file and present it "
    "with ExitPlanMode."
)
EMPTY_PLAN_REFUSAL = (
    "No plan was written. Write the complete plan (Markdown, starting with a # heading) to "
    "the plan file first, then call ExitPlanMode again."
)
EDIT_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}


def _claude_dir() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base) if base else Path.home() / ".claude"


def is_plan_file(path: str | None, env: dict[str, str] | None = None) -> bool:
    """Whether ``path`` is one of the CLI's own plan files (``<claude dir>/plans/*.md``)."""
    if not path:
        return False
    env = env or {}
    home = env.get("HOME")
    roots = [_claude_dir() / "plans"]
    if env.get("CLAUDE_CONFIG_DIR"):
        roots.append(Path(env["CLAUDE_CONFIG_DIR"]) / "plans")
    elif home:
        roots.append(Path(home) / ".claude" / "plans")
    try:
        p = Path(path).resolve()
    except OSError:
        return False
    return any(p.is_relative_to(r.resolve()) for r in roots)


def read_plan(tool_input: dict[str, Any],
              env: dict[str, str] | None = None) -> tuple[str, str | None]:
    """The plan Markdown and its file: ``plan`` first, then the plan file (older CLIs).

    The file is read only if it is one of the CLI's own plan files: the path is tool input,
    and a model could name any file (a key, a token) to have it shown and logged."""
    plan_file = tool_input.get("planFilePath")
    plan = tool_input.get("plan")
    if (not (isinstance(plan, str) and plan.strip()) and isinstance(plan_file, str)
            and is_plan_file(plan_file, env)):
        try:
            plan = Path(plan_file).read_text(encoding="utf-8")
        except OSError:
            plan = ""
    return (plan if isinstance(plan, str) else ""), (
        plan_file if isinstance(plan_file, str) else None
    )


class Gate:
    """Translates the CLI's permission requests into decisions, and decisions into answers."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def __call__(self, tool_name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        from claude_agent_sdk import PermissionResultDeny

        s = self.session
        try:
            if tool_name == "ExitPlanMode":
                return await self._plan(tool_input, ctx)
            if tool_name == "AskUserQuestion":
                return await self._question(tool_input, ctx)
            if s._plan_in_force():
                path = tool_input.get("file_path") or tool_input.get("notebook_path")
                if tool_name in EDIT_TOOLS and is_plan_file(path, s._cli_env):
                    from claude_agent_sdk import PermissionResultAllow

                    return PermissionResultAllow()
                s._note_refusal(tool_name, tool_input)
                return PermissionResultDeny(message=PLAN_MODE_REFUSAL)
            return await self._tool(tool_name, tool_input, ctx)
        except asyncio.CancelledError:
            # The CLI withdrew the request (control_cancel_request) or the session closed.
            for d in list(s._open_decisions()):
                if d.tool_use_id == getattr(ctx, "tool_use_id", None):
                    d.cancel("cli")
            raise

    async def _wait(self, decision: Decision) -> Outcome:
        s = self.session
        s._open_decision(decision)
        try:
            return await decision.wait(s.options.approval_timeout)
        finally:
            s._decision_closed(decision)

    def _no(self, outcome: Outcome, what: str) -> Any:
        from claude_agent_sdk import PermissionResultDeny

        if outcome.status == "expired" and outcome.by == "timeout":
            secs = self.session.options.approval_timeout
            return PermissionResultDeny(
                message=f"No answer came from the user within {secs:g} s; {what} Stop and wait "
                "for the user."
            )
        if outcome.by in ("interrupt", "close", "cli", "restart"):
            return PermissionResultDeny(
                message=f"The user interrupted; {what}", interrupt=True
            )
        return PermissionResultDeny(message=f"No answer; {what}")

    async def _plan(self, tool_input: dict[str, Any], ctx: Any) -> Any:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, PermissionUpdate

        s = self.session
        plan, plan_file = read_plan(tool_input, self.session._cli_env)
        if not plan.strip():
            s._note_empty_plan(plan_file)
            return PermissionResultDeny(message=EMPTY_PLAN_REFUSAL)
        decision = PlanDecision(
            plan, plan_file, s.options.mode, tool_use_id=getattr(ctx, "tool_use_id", None)
        )
        outcome = await self._wait(decision)
        if outcome.status == "approved" and outcome.by in ("user", "code"):
            mode = outcome.mode or s.options.mode
            await s._leaving_plan(mode)
            return PermissionResultAllow(
                updated_permissions=[
                    PermissionUpdate(type="setMode", mode=mode, destination="session")  # type: ignore[arg-type]
                ]
            )
        if outcome.status == "rejected":
            return PermissionResultDeny(message=outcome.feedback or "")
        return self._no(outcome, "the plan was NOT approved.")

    async def _question(self, tool_input: dict[str, Any], ctx: Any) -> Any:
        from claude_agent_sdk import PermissionResultAllow

        questions = tool_input.get("questions")
        if not isinstance(questions, list):
            questions = []
        decision = QuestionDecision(
            [q for q in questions if isinstance(q, dict)],
            tool_use_id=getattr(ctx, "tool_use_id", None),
        )
        outcome = await self._wait(decision)
        if outcome.status == "answered":
            answered: dict[str, Any] = {**tool_input, "answers": dict(outcome.answers or {})}
            if outcome.notes:
                answered["annotations"] = {q: {"notes": n} for q, n in outcome.notes.items()}
            return PermissionResultAllow(updated_input=answered)
        return self._no(outcome, "the questions were not answered.")

    async def _tool(self, tool_name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        suggestions = list(getattr(ctx, "suggestions", None) or [])
        decision = ToolDecision(
            tool_name,
            tool_input,
            suggestions,
            tool_use_id=getattr(ctx, "tool_use_id", None),
            title=getattr(ctx, "title", None),
        )
        outcome = await self._wait(decision)
        if outcome.status == "allowed":
            return PermissionResultAllow()
        if outcome.status == "always":
            return PermissionResultAllow(updated_permissions=suggestions)
        if outcome.status == "denied":
            return PermissionResultDeny(
                message=outcome.feedback or "The user denied this tool call."
            )
        return self._no(outcome, f"{tool_name} was not allowed.")
