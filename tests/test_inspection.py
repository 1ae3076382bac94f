"""The kernel tools' pure parts, with no kernel and no CLI: listing, inspecting, history,
the time budget, running code, proposals, the gate's rules for them, and the code on a card."""

from __future__ import annotations

import asyncio
import threading
import time
import types

import numpy as np
import pandas as pd
import pytest

from plan_widgets.agent.decisions import Decision, DecisionList, ToolDecision
from plan_widgets.agent.gate import KERNEL_PLAN_REFUSAL, Gate
from plan_widgets.agent.seam import Allow, Deny, HostTools, PermissionRequest, ToolSpec
from plan_widgets.ipython.kernel import budget
from plan_widgets.ipython.kernel.describe import DESCRIBE_CELLS, inspect_value
from plan_widgets.ipython.kernel.inspection import (
    MAX_OUTPUT,
    format_history,
    list_variables,
    short_repr,
)
from plan_widgets.ipython.kernel.runcode import run_code as arun_code
from plan_widgets.ipython.kernel.tools import combined, notebook_path
from plan_widgets.model.options import SessionOptions
from plan_widgets.render.code import highlight_python

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"


class Loud:
    def __repr__(self) -> str:
        raise ValueError("boom")


Loud.__module__ = "__main__"  # as if defined in a notebook


def user_function() -> None:
    pass


user_function.__module__ = "__main__"


def namespace() -> dict:
    return {
        "In": [""], "Out": {}, "_": None, "_i3": "x", "_7": 1, "exit": object(),
        "get_ipython": lambda: None, "_private": 1, "__builtins__": {},
        "np": np, "pd": pd, "sqrt": __import__("math").sqrt, "Path": __import__("pathlib").Path,
        "df": pd.DataFrame({"Price ": [1.0, None], "qty": [1, 2]}),
        "arr": np.arange(12).reshape(3, 4), "name": "Ada", "items": [1, "two", Loud()],
        "loud": Loud(), "user_function": user_function, "OPENAI_API_KEY": "not shown",
        "github_token": "ghp_hidden", "note": f"key is {SECRET}", "hidden_by_kernel": 1,
    }


# -- listing -----------------------------------------------------------------------------------

def test_listing_leaves_out_modules_ipython_names_private_and_library_functions() -> None:
    text = list_variables(namespace(), hidden={"hidden_by_kernel"})
    names = {line.split()[0] for line in text.splitlines()[2:]}
    assert names == {"df", "arr", "name", "items", "loud", "user_function", "OPENAI_API_KEY",
                     "github_token", "note"}
    assert "columns: 'Price ', 'qty'" in text and "2x2" in text and "3x4" in text
    assert "<Loud object>" in text  # the listing never calls a user's repr
    assert "[1, 'two', <Loud object>]" in text


def test_listing_redacts_secret_names_and_secret_values() -> None:
    text = list_variables(namespace())
    assert "not shown" not in text and "ghp_hidden" not in text and SECRET not in text
    for name in ("OPENAI_API_KEY", "github_token"):
        row = next(line for line in text.splitlines() if line.startswith(name))
        assert row.rstrip().endswith("[redacted]"), row
    assert "key is [redacted]" in text


def test_listing_is_bounded_and_filtered() -> None:
    ns = {f"v{i}": i for i in range(1000)}
    assert list_variables(ns).startswith("1000 variables (showing 200; narrow with pattern, "
                                          "or raise limit)")
    big = {f"v{i}": "x" * 10_000 for i in range(1000)}
    text = list_variables(big, limit=1000)
    assert text.startswith("1000 variables (showing 181; narrow with pattern, or the output "
                           "is bounded)")
    assert len(text) <= MAX_OUTPUT
    assert list_variables(big, pattern="v99*").startswith("11 variables:")
    assert list_variables(big, pattern="nothing") == "No user variables matching 'nothing' in " \
        "the kernel."


def test_short_repr_is_bounded_and_runs_no_user_code() -> None:
    assert short_repr("x" * 1000).endswith("…") and len(short_repr("x" * 1000)) <= 80
    assert short_repr(10 ** 5000) == "<int of 16,610 bits>"
    assert short_repr({"password": "hunter2", "a": 1}) == "{'password': '[redacted]', 'a': 1}"
    assert short_repr([[[[1]]]]) == "[[list(len 1)]]"
    assert short_repr(Loud()) == "<Loud object>"


# -- inspecting ----------------------------------------------------------------------------------

def test_inspect_small_dataframe() -> None:
    df = pd.DataFrame({"Price ": [1.0, None, 3.0], "qty": [1, 2, 3]})
    text = inspect_value("df", df)
    assert text.startswith("df (pandas.DataFrame)\nshape: 3 rows x 2 columns")
    assert "'Price ': float64" in text and "'Price ': 1" in text  # quoted names, one null
    assert "head(5):" in text and "describe():" in text and "max" in text


def test_inspect_large_dataframe_leaves_out_describe_and_stays_bounded() -> None:
    n = DESCRIBE_CELLS
    df = pd.DataFrame({f"c{i}": np.zeros(n) for i in range(60)})
    text = inspect_value("big", df)
    assert f"shape: {n:,} rows x 60 columns" in text
    assert "describe(): left out" in text
    assert "… 20 more columns" in text
    assert len(text) <= MAX_OUTPUT


def test_inspect_series_and_arrays() -> None:
    s = pd.Series([1, 2, None], name="x")
    text = inspect_value("s", s)
    assert "length: 3" in text and "null count:\n1" in text and "describe():" in text
    text = inspect_value("a", np.arange(10))
    assert "shape: (10,)" in text and "min / max / mean:\n0 / 9 / 4.5" in text
    big = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(30_000_000,), strides=(0,))
    assert "min / max / mean: left out" in inspect_value("big", big)


def test_inspect_reports_a_raising_repr_and_redacts_secrets() -> None:
    text = inspect_value("loud", Loud())
    assert text.startswith("loud (Loud)\nrepr:\n(failed: ValueError: boom)"), text
    assert inspect_value("API_KEY", "abc").endswith("its value is never shown)")
    assert "abc" not in inspect_value("API_KEY", "abc")
    assert SECRET not in inspect_value("note", f"key={SECRET}")


def test_inspect_other_objects_is_bounded() -> None:
    text = inspect_value("xs", list(range(100_000)))
    assert "length: 100,000" in text and "..." in text and len(text) < 2000
    huge = types.SimpleNamespace(blob="x" * 100_000)
    assert len(inspect_value("huge", huge)) <= MAX_OUTPUT


# -- the time budget -----------------------------------------------------------------------------

def test_budget_stops_a_hanging_python_loop_without_blocking_the_loop() -> None:
    def hang() -> None:
        while True:
            pass

    async def main() -> tuple:
        ticks = []

        async def ticker() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        t = asyncio.ensure_future(ticker())
        got = await budget.call(hang, 0.5)
        during = len(ticks)
        ok = await budget.call(lambda: 42, 1)
        bad = await budget.call(lambda: 1 / 0, 1)
        t.cancel()
        return got, ok, bad, during

    got, ok, bad, during = asyncio.run(main())
    assert got.timed_out and ok.value == 42 and isinstance(bad.error, ZeroDivisionError)
    assert during >= 3  # the loop kept running while the call hung (no timing bound here)
    def running() -> list:
        return [t for t in threading.enumerate() if t.name == "plan_widgets-budget"]

    deadline = time.monotonic() + 5
    while (budget.stuck() or running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert budget.stuck() == 0 and not running()  # the budget's exception ended the loop


# -- history and where the notebook is -----------------------------------------------------------

def test_history_is_bounded_newest_last_and_redacted() -> None:
    inputs = ["", "x = 1", f"TOKEN = '{SECRET}'", "y" * 5000, "x + 1"]
    text = format_history(inputs, {4: 2}, last=3, notebook="/n/a.ipynb")
    assert text.startswith("Notebook: /n/a.ipynb\nCells 2-4 of 4")
    assert "In [1]" not in text and SECRET not in text
    assert "more characters]" in text and text.endswith("In [4]:\nx + 1\nOut[4]: 2")
    assert "Notebook: unknown" in format_history([""], {})


def test_notebook_path(tmp_path) -> None:
    (tmp_path / "a.ipynb").write_text("{}")
    assert notebook_path({"__session__": str(tmp_path / "b.ipynb")}, {}) == str(
        tmp_path / "b.ipynb")
    assert notebook_path({}, {"JPY_SESSION_NAME": "sub/a.ipynb"}, str(tmp_path)) == str(
        tmp_path / "a.ipynb")
    assert notebook_path({}, {"JPY_SESSION_NAME": "console-1-abc"}) is None
    assert notebook_path({"__vsc_ipynb_file__": "/v/c.ipynb", "__session__": "/x.ipynb"},
                         {}) == "/v/c.ipynb"


# -- running code and proposing cells -------------------------------------------------------------

def run_code(ns: dict, code: str) -> str:
    return asyncio.run(arun_code(ns, code))


def test_run_code_changes_the_namespace_and_reports_bounded_output() -> None:
    ns: dict = {"counter": 1}
    text = run_code(ns, "counter += 1\nprint('now', counter)\ncounter * 10")
    assert ns["counter"] == 2
    assert text == "stdout:\nnow 2\n\n\nresult (int):\n20"
    text = run_code(ns, "print('x' * 100_000)")
    assert "more characters]" in text and len(text) < 10_000
    assert run_code(ns, "z = 3") == "Done (no output, no result)."


def test_run_code_reports_errors_and_survives_system_exit() -> None:
    ns: dict = {}
    text = run_code(ns, "print('before')\n1 / 0")
    assert "stdout:\nbefore" in text and "ZeroDivisionError: division by zero" in text
    assert 'File "<claude-run-' in text and "1 / 0" in text  # the line is shown
    assert "run_code" not in text  # our own frame is left out
    assert run_code(ns, "def broken(:").startswith("SyntaxError:")
    assert "SystemExit" in run_code(ns, "raise SystemExit(3)")


def test_run_code_awaits_at_top_level_as_a_cell_does() -> None:
    ns: dict = {}
    text = run_code(ns, "import asyncio\n"
                        "async def twice(x):\n"
                        "    await asyncio.sleep(0.01)\n"
                        "    return 2 * x\n"
                        "got = await twice(4)\n"
                        "async def gen():\n"
                        "    yield 1\n"
                        "    yield 2\n"
                        "seen = [v async for v in gen()]\n"
                        "print('got', got)\n"
                        "await twice(got)")
    assert ns["got"] == 8 and ns["seen"] == [1, 2]
    assert text == "stdout:\ngot 8\n\n\nresult (int):\n16"
    text = run_code(ns, "import asyncio\nawait asyncio.sleep(0)\nraise ValueError('late')")
    assert "ValueError: late" in text and 'File "<claude-run-' in text
    assert "run_code" not in text and "_run" not in text


def test_proposals_combine_into_one_cell() -> None:
    assert combined([("x = 1", "")]) == "x = 1\n"
    assert combined([("x = 1", "set x")]) == "# set x\nx = 1\n"
    text = combined([("a()", "first"), ("b()\n", "")])
    assert text == "# Proposal 1 of 2: first\na()\n\n# Proposal 2 of 2\nb()\n"


def test_code_on_a_card_is_highlighted_and_escaped() -> None:
    html = highlight_python("s = '<img src=x onerror=alert(1)>'\n" * 3)
    assert "<img" not in html and "&lt;img" in html and html.startswith("<pre")
    assert "more lines" in highlight_python("x\n" * 300)


# -- the gate's rules for the kernel tools ---------------------------------------------------------

async def _noop(args: dict) -> str:
    return ""


TOOLS = HostTools(tools=(ToolSpec("list_variables", "", {}, _noop),
                         ToolSpec("run_code", "", {}, _noop, changes_state=True)),
                  notebook="/nb/analysis.ipynb")


class _Host:
    def __init__(self, plan: bool, tools: HostTools | None = TOOLS) -> None:
        self.options = SessionOptions(cwd="/nb")
        self.plan_in_force = plan
        self.cli_env: dict[str, str] = {}
        self.host_tools = tools
        self.decision_list = DecisionList()
        self.refused: list[tuple[str, str]] = []

    def open_decision(self, d: Decision) -> None:
        self.decision_list.add(d)

    def decision_closed(self, d: Decision) -> None:
        pass

    def end_decisions(self, by: str, *, only: Decision | None = None) -> None:
        self.decision_list.end_open(by, only=only)  # type: ignore[arg-type]

    def note_refusal(self, tool: str, tool_input: dict) -> None:
        self.refused.append(("plan", tool))

    def note_gate_refusal(self, kind: str, tool: str, tool_input: dict, marker: str) -> None:
        self.refused.append((kind, tool))

    def note_empty_plan(self) -> None:
        pass

    async def leaving_plan(self, mode: str) -> None:
        pass


def scr(gate: Gate, request: PermissionRequest) -> object:
    """The gate's own answer or decision for ``request`` (decisions need a running loop)."""
    async def main() -> object:
        return gate._screen(request)

    return asyncio.run(main())


@pytest.mark.parametrize("plan", [True, False])
def test_gate_allows_reading_the_kernel_in_every_mode(plan: bool) -> None:
    h = _Host(plan)
    got = scr(Gate(h), PermissionRequest("mcp__kernel__list_variables", {}))
    assert got == Allow() and not h.decision_list.all


def test_gate_refuses_running_code_in_plan_mode_and_asks_otherwise() -> None:
    h = _Host(True)
    got = scr(Gate(h), PermissionRequest("mcp__kernel__run_code", {"code": "x = 1"}))
    assert isinstance(got, Deny)
    assert got.message == KERNEL_PLAN_REFUSAL.format(tool="mcp__kernel__run_code")
    assert "put the code you want to run in the plan" in got.message
    got = scr(Gate(_Host(False)), PermissionRequest("mcp__kernel__run_code", {"code": "1"}))
    assert isinstance(got, ToolDecision) and got.tool == "mcp__kernel__run_code"


def test_gate_refuses_writes_to_the_open_notebook_only() -> None:
    h = _Host(False)
    gate = Gate(h)
    for tool, key, path in (("Write", "file_path", "/nb/analysis.ipynb"),
                            ("Edit", "file_path", "analysis.ipynb"),
                            ("NotebookEdit", "notebook_path", "/nb/./analysis.ipynb")):
        got = scr(gate, PermissionRequest(tool, {key: path}))
        assert isinstance(got, Deny) and "propose a cell (mcp__kernel__propose_cell)" in \
            got.message, (tool, path)
        assert isinstance(asyncio.run(gate.screen(PermissionRequest(tool, {key: path}))), Deny)
    other = PermissionRequest("Write", {"file_path": "/nb/other.ipynb"})
    assert isinstance(scr(gate, other), ToolDecision)
    assert asyncio.run(gate.screen(other)) is None
    assert h.refused == [("notebook_write", t) for t in ("Write", "Edit", "NotebookEdit")
                         for _ in range(2)]
    # without kernel tools (turned off) there is nothing to protect and no tool to allow
    bare = Gate(_Host(False, tools=None))
    assert asyncio.run(bare.screen(PermissionRequest("Write",
                                                     {"file_path": "/nb/analysis.ipynb"}))) is None
    assert isinstance(scr(bare, PermissionRequest("mcp__kernel__list_variables", {})),
                      ToolDecision)


def test_subclasses_of_known_data_types_are_summarized() -> None:
    class Frame(pd.DataFrame):
        pass

    Frame.__module__ = "geo.frames"  # another library's DataFrame
    text = list_variables({"gdf": Frame({"a": [1, 2]})})
    assert "2x1" in text and "columns: 'a'" in text
    assert "shape: 2 rows x 1 columns" in inspect_value("gdf", Frame({"a": [1, 2]}))
