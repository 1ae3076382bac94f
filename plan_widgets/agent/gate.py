"""The permission gate: every ``can_use_tool`` callback of the CLI passes through here.

Rules (why: docs/cli.md#plan-mode): a plan is never auto-approved; approval names the next
mode itself (``setMode``); while plan mode is in force, any other tool the CLI asks about is
refused, except AskUserQuestion and writes to the CLI's own plan files; everything else becomes
a decision the user makes. Nothing is ever allowed without an explicit user action.

The kernel's own tools (:class:`~plan_widgets.agent.seam.HostTools`): those that only read
(or propose a cell) are allowed in every mode; one that changes the kernel (running code) is a
card like Bash, and refused in plan mode. An edit of the open notebook's own file is refused in
every mode (also by :meth:`Gate.screen`, a hook, where acceptEdits never asks).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..model.events import Actor
from ..model.options import SessionOptions
from . import wording
from .decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from .ondisk import snapshot
from .seam import Allow, Answer, Deny, HostTools, PermissionRequest

PLAN_MODE_REFUSAL = (
    "Plan mode is on: nothing may change before the user approves a plan. Do not write, edit "
    "or run anything except the plan file. Write your plan to the plan file and present it "
    "with ExitPlanMode."
)
EMPTY_PLAN_REFUSAL = (
    "No plan was written. Write the complete plan (Markdown, starting with a # heading) to "
    "the plan file first, then call ExitPlanMode again."
)
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
"""The tools that edit files (what acceptEdits allows, and what may write a plan file)."""
KERNEL_PLAN_REFUSAL = (
    "Plan mode is on: {tool} would change the kernel's state, and nothing may change before "
    "the user approves a plan. Read the kernel with the read-only kernel tools, and put the "
    "code you want to run in the plan: it runs after the user approves."
)
NOTEBOOK_WRITE_REFUSAL = (
    "{path} is the notebook open in Jupyter right now. Do not write its file: the frontend "
    "holds it open and saves over it, so a direct write is lost or corrupts the notebook. To "
    "add code to the notebook, propose a cell ({propose}); to change the kernel's state, run "
    "code in the kernel ({run})."
)


def _same_file(path: Any, target: str, cwd: str | None) -> bool:
    if not isinstance(path, str) or not path:
        return False
    try:
        p = Path(os.path.expanduser(path))
        if not p.is_absolute():
            p = Path(cwd or os.getcwd()) / p
        return os.path.realpath(p) == os.path.realpath(target)
    except (OSError, ValueError):
        return False


def notebook_write(r: PermissionRequest, tools: HostTools | None, cwd: str | None) -> str | None:
    """The model's refusal if ``r`` edits the open notebook's own file, else None."""
    if tools is None or not tools.notebook or r.tool not in EDIT_TOOLS:
        return None
    path = r.input.get("file_path") or r.input.get("notebook_path")
    if not _same_file(path, tools.notebook, cwd):
        return None
    return NOTEBOOK_WRITE_REFUSAL.format(path=tools.notebook,
                                         propose=tools.qualified("propose_cell"),
                                         run=tools.qualified("run_code"))


def _claude_dir() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base) if base else Path.home() / ".claude"


def is_plan_file(path: str | None, env: Mapping[str, str] | None = None) -> bool:
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
              env: Mapping[str, str] | None = None) -> tuple[str, str | None]:
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


class GateHost(Protocol):
    """What the gate needs from its session (and nothing else)."""

    @property
    def options(self) -> SessionOptions: ...
    @property
    def plan_in_force(self) -> bool: ...
    @property
    def cli_env(self) -> Mapping[str, str]: ...

    def open_decision(self, decision: Decision) -> None:
        """Log the decision, show its card, and count it as pending."""

    def decision_closed(self, decision: Decision) -> None:
        """The callback that waited for ``decision`` is done."""

    def end_decisions(self, by: Actor, *, only: Decision | None = None) -> None:
        """End open decisions unanswered (here: the CLI withdrew a request)."""

    def note_refusal(self, tool: str, tool_input: dict[str, Any]) -> None:
        """Plan mode refused a tool: log it and tell the user."""

    def note_empty_plan(self) -> None:
        """The agent presented an empty plan and was sent back."""

    async def leaving_plan(self, mode: str) -> None:
        """An approved plan leaves plan mode into ``mode``: stop refusing at once."""

    @property
    def host_tools(self) -> HostTools | None:
        """The kernel's tools and the open notebook (None: no kernel tools)."""

    def note_gate_refusal(self, kind: str, tool: str, tool_input: dict[str, Any],
                          marker: str) -> None:
        """The gate refused a tool for a reason other than plan mode: log it, show ``marker``."""


class Gate:
    """Translates the CLI's permission requests into decisions, and decisions into answers."""

    def __init__(self, host: GateHost) -> None:
        self.host = host

    async def __call__(self, request: PermissionRequest) -> Answer:
        decision = self._screen(request)
        if not isinstance(decision, Decision):
            return decision
        decision.agent_id = request.agent_id
        if isinstance(decision, ToolDecision):  # the file as it is now, for the card's diff
            decision.before = await snapshot(request.tool, request.input, self.host.options.cwd)
        try:
            answer = await self._wait(decision)
        except asyncio.CancelledError:
            # The CLI withdrew the request (control_cancel_request) or the session closed.
            self.host.end_decisions("cli", only=decision)
            raise
        if isinstance(answer, Allow) and answer.mode is not None:
            await self.host.leaving_plan(answer.mode)
        return answer

    async def screen(self, request: PermissionRequest) -> Deny | None:
        """Before the CLI's own permission check, in every mode (a ``PreToolUse`` hook): an
        edit of the open notebook's file is refused."""
        why = notebook_write(request, self.host.host_tools, self.host.options.cwd)
        if why is None:
            return None
        self.host.note_gate_refusal("notebook_write", request.tool, request.input,
                                    wording.NOTEBOOK_WRITE_REFUSED)
        return Deny(why)

    def _host_tool(self, r: PermissionRequest) -> Decision | Answer | None:
        """The rules for the kernel's own tools (None: ``r`` is not one of them)."""
        h = self.host
        tools = h.host_tools
        spec = tools.tool(r.tool) if tools is not None else None
        if spec is None:
            return None
        if not spec.changes_state:  # reading the kernel, proposing a cell: nothing changes
            return Allow()
        if h.plan_in_force:
            h.note_refusal(r.tool, r.input)
            return Deny(KERNEL_PLAN_REFUSAL.format(tool=r.tool))
        return ToolDecision(r.tool, r.input, list(r.suggestions), tool_use_id=r.tool_use_id,
                            title=r.title or spec.title)

    def _screen(self, r: PermissionRequest) -> Decision | Answer:
        """The decision to put to the user, or the gate's own answer."""
        h = self.host
        own = self._host_tool(r)
        if own is not None:
            return own
        why = notebook_write(r, h.host_tools, h.options.cwd)
        if why is not None:
            h.note_gate_refusal("notebook_write", r.tool, r.input, wording.NOTEBOOK_WRITE_REFUSED)
            return Deny(why)
        if r.tool == "ExitPlanMode":
            plan, plan_file = read_plan(r.input, h.cli_env)
            if not plan.strip():
                h.note_empty_plan()
                return Deny(EMPTY_PLAN_REFUSAL)
            return PlanDecision(plan, plan_file, h.options.mode, tool_use_id=r.tool_use_id,
                                tool_input=r.input)
        if r.tool == "AskUserQuestion":
            qs = r.input.get("questions")
            questions = [q for q in qs if isinstance(q, dict)] if isinstance(qs, list) else []
            return QuestionDecision(questions, tool_use_id=r.tool_use_id, tool_input=r.input)
        if h.plan_in_force:
            path = r.input.get("file_path") or r.input.get("notebook_path")
            if r.tool in EDIT_TOOLS and is_plan_file(path, h.cli_env):
                return Allow()
            h.note_refusal(r.tool, r.input)
            return Deny(PLAN_MODE_REFUSAL)
        return ToolDecision(r.tool, r.input, list(r.suggestions), tool_use_id=r.tool_use_id,
                            title=r.title)

    async def _wait(self, decision: Decision) -> Answer:
        h = self.host
        h.open_decision(decision)
        try:
            await decision.wait(h.options.approval_timeout)
        finally:
            h.decision_closed(decision)
        return decision.cli_answer(h.options.approval_timeout)
