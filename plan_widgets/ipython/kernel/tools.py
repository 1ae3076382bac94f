"""The kernel's tools for the agent: the notebook is its context.

Each session gets an in-process tool server (``mcp__kernel__<name>``; turned off with
``--no-kernel-tools`` or ``%config ClaudeMagics.kernel_tools = False``):

- ``list_variables``, ``inspect_variable``, ``read_history`` read the kernel (the gate allows
  them in every mode, plan mode too);
- ``run_code`` runs code in the user's namespace: the gate shows a card first, and refuses it
  in plan mode;
- ``propose_cell`` offers code as a new cell (nothing runs).

The tools run on the kernel's event loop (the SDK calls them there). Listing and history run
none of the user's code; inspecting does, in a thread under a time budget (:mod:`budget`);
``run_code`` runs the approved code on the main thread, as a cell would, and the kernel's
stop button interrupts it.

Proposed cells (docs/notebook-context.md, measured in JupyterLab 4 and Notebook 7): a
``set_next_input`` payload shows only when the cell that is executing returns, and of several
only one shows. So the proposals made while the ``%%claude`` cell waits are combined into
that one payload (rewritten on each proposal: the latest holds them all), and the new cell
appears below the ``%%claude`` cell when it returns. A proposal made after that cell returned
(the turn goes on in the background after a card) would land below whatever cell runs next,
so it is not sent: the turn's output shows its code to copy.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ...agent.seam import HostTools, ToolFailure, ToolSpec
from . import budget
from .describe import inspect_value
from .inspection import LIST_LIMIT, MAX_OUTPUT, clip, finish, format_history, list_variables
from .revision import revision
from .runcode import run_code

SERVER = "kernel"
INSPECT_SECONDS = 2.0
"""The time budget of one inspection (the value's own repr, pandas' head, ...)."""


# -- where the kernel is ----------------------------------------------------------------------

def notebook_path(user_ns: Mapping[str, Any], environ: Mapping[str, str],
                  cwd: str | None = None) -> str | None:
    """The notebook this kernel runs, as an absolute path, if the frontend said: VS Code's
    ``__vsc_ipynb_file__``, ipykernel's ``__session__``, or Jupyter Server's
    ``JPY_SESSION_NAME`` (a console's session name is no notebook)."""
    for cand in (user_ns.get("__vsc_ipynb_file__"), user_ns.get("__session__"),
                 environ.get("JPY_SESSION_NAME")):
        if not (isinstance(cand, str) and cand.endswith(".ipynb")):
            continue
        p = Path(cand).expanduser()
        if not p.is_absolute():
            base = Path(cwd or os.getcwd())
            p = base / p if (base / p).exists() or not (base / p.name).exists() else base / p.name
        return str(p)
    return None


def prompt(notebook: str | None, tools: HostTools) -> str:
    """What the system prompt learns about where the agent works."""
    q = tools.qualified
    where = (f"You are working inside a Jupyter notebook, {notebook}, through its live kernel: "
             if notebook else
             "You are working inside a live Jupyter/IPython kernel (the notebook file is not "
             "known): ")
    return (
        where + "the user talks to you from `%%claude` cells, and sees your turn there.\n"
        "Tools into the kernel:\n"
        f"- {q('list_variables')}: the user's variables (name, type, shape, a short value).\n"
        f"- {q('inspect_variable')}: one variable in depth (a DataFrame's dtypes, head and "
        "null counts; an array's shape and statistics; any object's repr).\n"
        f"- {q('read_history')}: the cells run in this kernel and their results.\n"
        f"- {q('run_code')}: run Python in the user's namespace (the user approves each call; "
        "refused in plan mode, where the code belongs in the plan).\n"
        f"- {q('propose_cell')}: propose code as a new cell of the notebook; the user "
        "decides whether to run it (to change a cell, give its id as replaces: the user sees "
        "the change).\n"
        + "".join(f"- {q(t.name)}: a function of the user's notebook"
                  + (" (the user approves each call; refused in plan mode)" if t.changes_state
                     else "") + ".\n" for t in tools.tools[5:])
        + "Look at the data with these tools before assuming anything about it. Never write or "
        "edit the .ipynb file of the open notebook (the frontend holds it; such writes are "
        "refused): propose a cell instead."
    )


# -- proposed cells -----------------------------------------------------------------------------

class _Proposals:
    """The proposals of the ``%%claude`` cell that waits now, per session."""

    def __init__(self) -> None:
        self.open: dict[str, list[tuple[str, str]]] = {}

    def add(self, session: str, code: str, title: str) -> bool:
        """Record a proposal; True if it goes below the waiting cell, False if no cell of
        this session waits (it is shown in the turn to copy)."""
        cell = self.open.get(session)
        if cell is None:
            return False
        cell.append((code, title))
        _set_next_input(combined(cell))
        return True


_proposals = _Proposals()


def combined(proposals: list[tuple[str, str]]) -> str:
    """One cell holding every proposal, in order (one payload is all the frontend shows)."""
    if len(proposals) == 1:
        code, title = proposals[0]
        return (f"# {title}\n" if title else "") + code.rstrip() + "\n"
    parts = []
    for i, (code, title) in enumerate(proposals, 1):
        head = f"# Proposal {i} of {len(proposals)}" + (f": {title}" if title else "")
        parts.append(f"{head}\n{code.rstrip()}\n")
    return "\n".join(parts)


def _set_next_input(text: str) -> None:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is not None:
        ip.set_next_input(text, replace=False)


@contextlib.contextmanager
def cell_waiting(session: str) -> Iterator[None]:
    """While a ``%%claude`` cell of ``session`` waits: its proposals go below it."""
    _proposals.open[session] = []
    try:
        yield
    finally:
        _proposals.open.pop(session, None)


# -- the tools ------------------------------------------------------------------------------------

def _shell() -> Any:
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        raise ToolFailure("no IPython kernel is running")
    return ip


def _lookup(ns: Mapping[str, Any], name: str) -> Any:
    """``name`` or a dotted path (``model.coef_``) in the namespace; attribute access may run
    the user's code, so this runs under the budget too."""
    head, *rest = name.split(".")
    if head not in ns:
        raise KeyError(head)
    value = ns[head]
    for attr in rest:
        value = getattr(value, attr)
    return value


def _schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or [],
            "additionalProperties": False}


def _capture() -> Any:
    from IPython.utils.capture import capture_output

    return capture_output(stdout=False, stderr=False, display=True)


class KernelTools:
    """The tool handlers of one session (``session``: its name)."""

    def __init__(self, session: str, notebook: str | None,
                 interrupt: Callable[[], None] | None) -> None:
        self.session = session
        self.notebook = notebook
        self.interrupt = interrupt

    async def list_variables(self, args: dict[str, Any]) -> str:
        shell = _shell()
        hidden = getattr(shell, "user_ns_hidden", None) or {}
        return list_variables(shell.user_ns, hidden, pattern=args.get("pattern"),
                              limit=int(args.get("limit") or LIST_LIMIT))

    async def inspect_variable(self, args: dict[str, Any]) -> str:
        name = str(args.get("name", "")).strip()
        if not name:
            raise ToolFailure("give the variable's name")
        ns = _shell().user_ns

        def work() -> str:
            try:
                value = _lookup(ns, name)
            except (KeyError, AttributeError) as e:
                return f"No variable {name!r} in the kernel ({type(e).__name__}: {e})."
            return inspect_value(name, value)

        got = await budget.call(work, INSPECT_SECONDS)
        if got.refused:
            raise ToolFailure(f"Not inspected {name}: {got.refused}")
        if got.timed_out:
            return finish(f"Inspecting {name} timed out after {INSPECT_SECONDS:g} s (its repr "
                          "or summary runs too long, or hangs); it was stopped, and nothing "
                          "else is known. The user's kernel goes on.")
        if got.error is not None:
            e = got.error
            return finish(f"Inspecting {name} raised {type(e).__name__}: {clip(str(e), 500)}")
        return str(got.value)

    async def read_history(self, args: dict[str, Any]) -> str:
        shell = _shell()
        hm = shell.history_manager
        path = notebook_path(shell.user_ns, os.environ) or self.notebook
        return format_history(list(hm.input_hist_raw), dict(hm.output_hist),
                              last=int(args.get("last") or 20), notebook=path)

    async def run_code(self, args: dict[str, Any]) -> str:
        code = str(args.get("code", ""))
        if not code.strip():
            raise ToolFailure("the code is empty")
        return await run_code(_shell().user_ns, code, capture_display=_capture,
                        interrupted=self._interrupted)

    def _interrupted(self, previous: Any) -> None:
        """The stop button stopped the code: the turn stops too."""
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signal.SIGINT, None)  # a waiting cell's handler: the cell interrupts it
        elif self.interrupt is not None:
            self.interrupt()

    async def propose_cell(self, args: dict[str, Any]) -> str:
        code = str(args.get("code", ""))
        if not code.strip():
            raise ToolFailure("the code is empty")
        title = " ".join(str(args.get("title") or "").split())[:120]
        replaces = str(args.get("replaces") or "").strip()
        change = ""
        if replaces:  # a revision of a cell of the open notebook: the change, as a diff
            shell = _shell()
            nb = notebook_path(shell.user_ns, os.environ) or self.notebook
            change = "\n\n" + await revision(nb, replaces, code)
        if _proposals.add(self.session, code, title):
            return ("Proposed. The code appears as a new cell below the user's %%claude cell "
                    "when that cell returns (every proposal of this cell is combined into that "
                    "one new cell). Nothing ran: the user decides whether to run it." + change)
        return ("Proposed. The %%claude cell has already returned, so the code is shown in the "
                "turn's output for the user to copy into a cell. Nothing ran." + change)

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            ToolSpec("list_variables", _LIST_DOC, _schema({
                "pattern": {"type": "string",
                            "description": "only names matching this glob (df*) or substring"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000,
                          "description": f"rows at most (default {LIST_LIMIT})"}}),
                self.list_variables),
            ToolSpec("inspect_variable", _INSPECT_DOC,
                     _schema({"name": {"type": "string"}}, ["name"]), self.inspect_variable),
            ToolSpec("read_history", _HISTORY_DOC, _schema({
                "last": {"type": "integer", "minimum": 1, "maximum": 200,
                         "description": "how many recent cells (default 20)"}}),
                self.read_history),
            ToolSpec("run_code", _RUN_DOC, _schema({"code": {"type": "string"}}, ["code"]),
                     self.run_code, changes_state=True, title="Run this code in the kernel?"),
            ToolSpec("propose_cell", _PROPOSE_DOC, _schema({
                "code": {"type": "string"},
                "title": {"type": "string", "description": "a short comment line"},
                "replaces": {"type": "string", "description": (
                    "when the code revises a cell of the open notebook: that cell's id (as "
                    "Read shows it, or cell-N); the user sees the change as a diff")}}, ["code"]),
                self.propose_cell),
        )


_LIST_DOC = (
    "List the user's variables in the live Jupyter kernel: name, type, shape or length, and a "
    "short value. Modules, IPython's own names, private names and library functions are left "
    "out; values of secret-named variables are redacted. Reads only.")
_INSPECT_DOC = (
    "Inspect one variable of the live kernel (a name, or a dotted path such as model.coef_): a "
    "DataFrame's shape, dtypes, head, null counts (describe() when small); an array's shape, "
    "dtype, min/max/mean; otherwise a bounded repr. Reads only; bounded to "
    f"{MAX_OUTPUT // 1000} KB and {INSPECT_SECONDS:g} s.")
_HISTORY_DOC = (
    "Read the notebook's history: the cells run in this kernel (In) with their results (Out), "
    "truncated, and the notebook's path. Reads only.")
_RUN_DOC = (
    "Run Python code in the user's live kernel namespace (like a cell that is not saved): "
    "returns stdout, stderr, the last expression's value and any traceback, bounded. It "
    "changes the kernel's state, so the user approves each call; in plan mode it is refused "
    "(put the code in the plan).")
_PROPOSE_DOC = (
    "Propose Python code as a new cell of the notebook, below the user's %%claude cell. "
    "Nothing runs: the user reads it and decides. Allowed in plan mode. To change a cell of "
    "the open notebook, propose its new code with replaces set to that cell's id: the user "
    "sees the change as a diff.")


def host_tools(session: str, *, interrupt: Callable[[], None] | None = None) -> HostTools | None:
    """The kernel tools for the session called ``session`` (None outside IPython)."""
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        return None
    from .user_tools import specs as notebook_functions

    notebook = notebook_path(ip.user_ns, os.environ)
    specs = KernelTools(session, notebook, interrupt).specs() + notebook_functions()
    tools = HostTools(tools=specs, server=SERVER, notebook=notebook)
    return HostTools(tools=specs, server=SERVER, notebook=notebook,
                     prompt=prompt(notebook, tools))
