"""The agent's task list, as the CLI's task tools report it (measured: docs/cli.md#task-tools).

This CLI offers exactly one of two shapes per session:

- ``TodoWrite``: the whole list on every call, ``{"todos": [{"content", "status",
  "activeForm"}]}``; its result's ``tool_use_result`` is ``{"oldTodos", "newTodos"}``;
- ``TaskCreate`` / ``TaskUpdate`` (``TaskList``, ``TaskGet``): one task per call. The CLI gives
  the ids ("1", "2", ...) and returns them only in the result (``{"task": {"id", "subject",
  ...}}``); an update's result says whether it took (``{"success", "taskId",
  "statusChange"}``); an unknown id is answered ``success: false`` without ``is_error``.

The list follows the tool RESULTS, never the calls alone: a refused call (the tool disabled
for this session, invalid input) still shows its ``ToolUseBlock``. Results of one batch can come
back in another order than their calls, so each result is matched to its call by id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TASK_TOOLS = frozenset({"TodoWrite", "TaskCreate", "TaskUpdate", "TaskList"})
"""The tools whose results change (or restate) the task list."""
FOLDED_TOOLS = TASK_TOOLS | {"TaskGet"}
"""The task tools a turn's view shows no line for: the checklist says what they did (their
JSON lines stood around it and repeated it; issue 26). A call that fails still shows."""
STATUSES = ("pending", "in_progress", "completed")


@dataclass(frozen=True)
class Task:
    """One item of the agent's task list."""

    id: str
    subject: str
    status: str = "pending"
    active_form: str = ""
    """What the agent shows while the task is in progress ("Writing a.txt")."""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "subject": self.subject, "status": self.status,
                "active_form": self.active_form}

    @classmethod
    def from_dict(cls, d: Any) -> Task:
        get = d.get if isinstance(d, Mapping) else (lambda k, default=None: default)
        return cls(str(get("id", "")), str(get("subject", "")),
                   str(get("status", "pending")), str(get("active_form", "") or ""))


def progress(tasks: Any) -> tuple[int, int]:
    """(done, total) of a task list (Tasks or their dicts)."""
    items = [t if isinstance(t, Task) else Task.from_dict(t) for t in tasks or ()]
    return sum(t.status == "completed" for t in items), len(items)


def _status(value: Any) -> str | None:
    return value if value in STATUSES else None


class Checklist:
    """The session's task list: :meth:`apply` takes one task tool's result."""

    def __init__(self, tasks: Any = ()) -> None:
        self.tasks: list[Task] = [t if isinstance(t, Task) else Task.from_dict(t)
                                  for t in tasks or ()]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [t.as_dict() for t in self.tasks]

    def apply(self, tool: str, tool_input: dict[str, Any], data: Any, is_error: bool) -> bool:
        """Take a task tool's result; True if the list changed. ``data`` is the result's
        structured form (the SDK's ``tool_use_result``); a refused or failed call changes
        nothing."""
        if is_error or tool not in TASK_TOOLS or not isinstance(data, dict):
            return False
        before = list(self.tasks)
        if tool == "TodoWrite":
            self._todos(data.get("newTodos"))
        elif tool == "TaskCreate":
            self._created(data.get("task"), tool_input)
        elif tool == "TaskUpdate":
            self._updated(data, tool_input)
        else:  # TaskList: the CLI's own account of the list (ids, subjects, statuses)
            self._listed(data.get("tasks"))
        return self.tasks != before

    def _todos(self, todos: Any) -> None:
        if not isinstance(todos, list):
            return
        out = []
        for i, t in enumerate(todos, 1):
            if isinstance(t, dict) and str(t.get("content") or "").strip():
                out.append(Task(str(i), str(t["content"]), _status(t.get("status")) or "pending",
                                str(t.get("activeForm") or "")))
        self.tasks = out

    def _created(self, task: Any, tool_input: dict[str, Any]) -> None:
        if not isinstance(task, dict) or task.get("id") is None:
            return
        tid = str(task["id"])
        subject = str(task.get("subject") or tool_input.get("subject") or f"Task {tid}")
        new = Task(tid, subject, "pending", str(tool_input.get("activeForm") or ""))
        self.tasks = [t for t in self.tasks if t.id != tid] + [new]

    def _updated(self, data: dict[str, Any], tool_input: dict[str, Any]) -> None:
        if data.get("success") is False:  # e.g. "Task not found" (not flagged as an error)
            return
        tid = str(data.get("taskId") or tool_input.get("taskId") or "")
        change = data.get("statusChange")
        status = (change.get("to") if isinstance(change, dict) else None) or tool_input.get(
            "status")
        out = []
        for t in self.tasks:
            if t.id != tid:
                out.append(t)
                continue
            if status == "deleted":
                continue
            out.append(Task(
                t.id, str(tool_input.get("subject") or t.subject),
                _status(status) or t.status,
                str(tool_input.get("activeForm") or t.active_form)))
        self.tasks = out

    def _listed(self, tasks: Any) -> None:
        if not isinstance(tasks, list):
            return
        known = {t.id: t for t in self.tasks}
        out = []
        for d in tasks:
            if not isinstance(d, dict) or d.get("id") is None:
                continue
            tid = str(d["id"])
            old = known.get(tid)
            out.append(Task(tid, str(d.get("subject") or (old.subject if old else tid)),
                            _status(d.get("status")) or (old.status if old else "pending"),
                            old.active_form if old else ""))
        self.tasks = out
