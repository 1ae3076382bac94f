"""Issue 14 end to end: the notebook is the agent's context.

A real kernel over the Jupyter protocol, the real CLI bundled with the SDK, the scripted model
(tests/scripts/kernel_tools.yaml) calling the kernel's tools as ``mcp__kernel__<name>``. What
the model read comes back from the scripted model's request log; cards are clicked as a
frontend clicks them.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e

SCRIPT = "kernel_tools.yaml"
SECRET = "sk-ant-api03-zyxwvutsrqponmlkjihgfedcba"
NOTEBOOK = json.dumps({"cells": [{"cell_type": "markdown", "id": "a1", "metadata": {},
                                  "source": ["original"]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def tool_results(workdir: Path) -> str:
    return "\n".join(r.get("tool_result") or "" for r in requests_of(workdir))


def replies(k: Kernel) -> str:
    return "\n".join(k.markdown_outputs())


def settle(k: Kernel, timeout: float = 60) -> str:
    out = k.execute(f"print(await plan_widgets.get().wait({timeout}))", timeout=timeout + 30)
    return out["text"].strip()


def start(workdir: Path, env: dict[str, str] | None = None) -> Kernel:
    k = Kernel(workdir, env=env)
    k.execute("%load_ext plan_widgets\nimport plan_widgets")
    return k


def stop(k: Kernel) -> None:
    try:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  timeout=30, allow_error=True)
    finally:
        k.shutdown()


@pytest.fixture
def dumped(workdir: Path) -> Path:
    return workdir / "bodies"


@pytest.fixture
def nb_kernel(workdir: Path, dumped: Path):
    """A kernel that knows its notebook (as Jupyter Server tells it), with request bodies kept."""
    (workdir / "analysis.ipynb").write_text(NOTEBOOK)
    k = start(workdir, env={"JPY_SESSION_NAME": str(workdir / "analysis.ipynb"),
                            "PLAN_WIDGETS_SCRIPTED_DUMP": str(dumped)})
    try:
        yield k
    finally:
        stop(k)


def test_the_model_lists_and_inspects_a_dataframe(nb_kernel: Kernel, workdir: Path,
                                                   dumped: Path) -> None:
    k = nb_kernel
    k.execute("import pandas as pd, numpy as np\n"
              "df = pd.DataFrame({'Price ': np.arange(1_000_000, dtype=float), 'Qty': 1})\n"
              "df.loc[3, 'Price '] = None\n"
              f"API_TOKEN = {SECRET!r}\nimport os\nfrom math import sqrt")
    out = k.execute(f"%%claude --scripted {SCRIPT}\nlook at my data", timeout=120)
    assert "Traceback" not in out["text"]
    got = tool_results(workdir)
    listing = got.split("df (pandas.DataFrame)")[0]
    assert "df         pandas.DataFrame  1000000x2  columns: 'Price ', 'Qty'" in listing, got
    assert "API_TOKEN  str" in listing and "[redacted]" in listing
    assert "os " not in listing and "sqrt" not in listing and "In " not in listing
    inspected = got[got.index("df (pandas.DataFrame)"):]
    for part in ("shape: 1,000,000 rows x 2 columns", "'Price ': float64", "head(5):",
                 "'Price ': 1", "describe(): left out"):
        assert part in inspected, part
    # no card: reading the kernel is allowed; the turn shows the tool lines, folded
    assert not k.find_widgets("ButtonModel", description="Allow")
    assert "mcp__kernel__inspect_variable" in replies(k)
    assert "INSPECTED: df (pandas.DataFrame)" in replies(k)
    # the model was told where it is; the secret never left the kernel
    bodies = [json.loads(p.read_text()) for p in sorted(dumped.glob("*.json"))]
    system = json.dumps([b.get("system") for b in bodies])
    assert "analysis.ipynb" in system and "mcp__kernel__propose_cell" in system
    assert "Never write or edit the .ipynb file" in system
    everything = "".join(p.read_text() for p in dumped.glob("*.json"))
    everything += "".join(p.read_text() for p in (workdir / ".plan_widgets").rglob("*.jsonl"))
    assert SECRET not in everything


def test_plan_mode_allows_reading_and_refuses_running_code(kernel: Kernel,
                                                           workdir: Path) -> None:
    kernel.execute("import pandas as pd\ndf = pd.DataFrame({'a': [1]})")
    kernel.execute(f"%%claude --scripted {SCRIPT} --plan\nplan with the kernel", timeout=120)
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert "df  pandas.DataFrame" in got  # the listing ran in plan mode
    assert "Plan mode is on: mcp__kernel__run_code would change the kernel's state" in got
    assert "put the code you want to run in the plan" in got
    assert kernel.eval("'ran_in_plan' in globals()") == "False"
    assert not kernel.find_widgets("ButtonModel", description="Allow")
    assert "Plan mode refused mcp__kernel__run_code" in kernel.html_text()


def test_deny_leaves_the_namespace_and_allow_changes_it(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("counter = 1")
    out = kernel.execute(f"%%claude --scripted {SCRIPT}\nbump the counter", timeout=120)
    assert "paused for your decision (tool)" in out["shown"]
    # the card shows the code, highlighted and escaped
    card = "\n".join(kernel.markdown_outputs()) + kernel.html_text()
    assert "counter" in card and "<span style=" in card
    assert "Run this code in the kernel?" in card
    kernel.click(kernel.wait_widget("ButtonModel", description="Deny"))
    assert settle(kernel) == "idle"
    assert kernel.eval("counter") == "1"
    kernel.execute("%%claude\nbump the counter", timeout=120)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow", count=2))
    assert settle(kernel) == "idle"
    assert kernel.eval("counter") == "2"
    got = tool_results(workdir)
    assert "RESULT: stdout:\nnow 2" in replies(kernel) or "stdout:\nnow 2" in got
    assert "result (int):\n20" in got
    # the run's output is in the turn, folded like any tool call
    assert "now 2" in replies(kernel)


def test_top_level_await_runs_on_the_kernels_loop(kernel: Kernel, workdir: Path) -> None:
    """Code the agent runs may await at top level, as a cell may (issue 25): it runs on the
    kernel's own loop (no nested loop), which goes on turning while the code awaits."""
    kernel.execute("import asyncio\nkernel_loop = asyncio.get_running_loop()")
    kernel.execute(f"%%claude --scripted {SCRIPT}\nrun the async code", timeout=120)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow"))
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert "SyntaxError" not in got
    assert "stdout:\nsame loop: True beats: ['beat']" in got
    assert "result (str):\n'awaited'" in got
    assert kernel.eval("async_done") == "True"


def test_interrupt_stops_awaiting_code(workdir: Path) -> None:
    """The stop button cancels code that awaits, as it cancels a waiting cell."""
    import time

    # as root, bypass needs a sandbox (docs/cli.md#plan-mode)
    k = start(workdir, env={"IS_SANDBOX": "1"})
    try:
        cell = k.start(f"%%claude --scripted {SCRIPT} --mode bypassPermissions\n"
                       "run the slow async loop")
        k.wait_until(lambda: "mcp__kernel__run_code" in replies(k), 30, "the run")
        time.sleep(1.0)  # the loop awaits (60 s if nothing stops it)
        k.interrupt()
        k.wait_until(lambda: any(
            m["parent_header"].get("msg_id") == cell and m["header"]["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle" for m in k.messages), 30, "the cell")
        assert settle(k, 30) == "idle"
        assert k.eval("'finished_loop' in globals()") == "False"
        assert 0 < int(k.eval("step")) < 599
        ended = k.eval("[e.result for e in plan_widgets.get().events if e.type == 'turn:ended']")
        # one turn, ended: by the interrupt's result, or (when the cancelled tool's error
        # reached the model first) by the model's reply to it; the code stopped either way
        assert ended in ("['error_during_execution']", "['success']"), ended
        assert k.eval("1 + 1") == "2"
    finally:
        stop(k)


def test_failing_code_returns_its_traceback(kernel: Kernel, workdir: Path) -> None:
    kernel.execute(f"%%claude --scripted {SCRIPT} --mode acceptEdits\nrun the failing code",
                   timeout=120)
    kernel.click(kernel.wait_widget("ButtonModel", description="Allow"))
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert "stdout:\nbefore" in got and "ZeroDivisionError: division by zero" in got
    assert kernel.eval("1 + 1") == "2"


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_interrupt_stops_running_code(workdir: Path, mode: str) -> None:
    """default: the code runs after the card's Allow, when no cell runs; bypassPermissions:
    no card, so it runs while the %%claude cell waits (the kernel's stop button is for both)."""
    import time

    # as root, bypass needs a sandbox (docs/cli.md#plan-mode)
    k = start(workdir, env={"IS_SANDBOX": "1"})
    try:
        cell = k.start(f"%%claude --scripted {SCRIPT} --mode {mode}\nrun the slow loop")
        if mode == "default":
            k.click(k.wait_widget("ButtonModel", description="Allow"))
        k.wait_until(lambda: "mcp__kernel__run_code" in replies(k), 30, "the run")
        time.sleep(1.0)  # the loop runs (60 s if nothing stops it)
        k.interrupt()
        k.wait_until(lambda: any(
            m["parent_header"].get("msg_id") == cell and m["header"]["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle" for m in k.messages), 30, "the cell")
        assert settle(k, 30) == "idle"
        assert k.eval("'finished_loop' in globals()") == "False"
        assert 0 < int(k.eval("step")) < 599
        ended = k.eval("[e.result for e in plan_widgets.get().events if e.type == 'turn:ended']")
        # one turn, ended: by the interrupt's result, or (when the cancelled tool's error
        # reached the model first) by the model's reply to it; the code stopped either way
        assert ended in ("['error_during_execution']", "['success']"), ended
        assert k.eval("1 + 1") == "2"
    finally:
        stop(k)


def test_a_repr_that_raises_and_one_that_hangs(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("class Bad:\n    def __repr__(self):\n        raise ValueError('no repr')\n"
                   "class Hang:\n    def __repr__(self):\n        while True:\n            pass\n"
                   "bad, hang = Bad(), Hang()")
    kernel.execute(f"%%claude --scripted {SCRIPT}\ninspect the odd objects", timeout=120)
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert "bad (Bad)\nrepr:\n(failed: ValueError: no repr)" in got
    assert "Inspecting hang timed out after 2 s" in got
    assert kernel.eval("1 + 1") == "2"  # the kernel answers; the stuck repr was stopped
    stuck = "__import__('plan_widgets.ipython.kernel.budget').ipython.kernel.budget.stuck()"
    assert kernel.eval(stuck) == "0"


def test_secrets_are_redacted_in_inspection_and_history(kernel: Kernel, workdir: Path) -> None:
    kernel.execute(f"API_TOKEN = {SECRET!r}")
    kernel.execute(f"%%claude --scripted {SCRIPT}\nshow the secret", timeout=120)
    assert settle(kernel) == "idle"
    got = tool_results(workdir)
    assert f"API_TOKEN (str), len {len(SECRET)}\nvalue: [redacted]" in got
    assert "Notebook: unknown" in got and "API_TOKEN = '[redacted]'" in got
    assert SECRET not in got
    assert SECRET not in "".join(p.read_text() for p in (workdir / ".plan_widgets").rglob("*")
                                 if p.is_file())


def test_a_write_to_the_open_notebook_is_refused(nb_kernel: Kernel, workdir: Path) -> None:
    # acceptEdits: the CLI never asks about an edit; the PreToolUse screen refuses it
    nb_kernel.execute(f"%%claude --scripted {SCRIPT} --mode acceptEdits\nedit the notebook file",
                      timeout=120)
    assert settle(nb_kernel) == "idle"
    assert (workdir / "analysis.ipynb").read_text() == NOTEBOOK
    assert (workdir / "other.ipynb").exists()  # other notebooks stay editable
    got = tool_results(workdir)
    assert "is the notebook open in Jupyter right now" in got
    assert "propose a cell (mcp__kernel__propose_cell)" in got
    assert "Refused a direct write to the open notebook" in nb_kernel.html_text()


def test_the_kernel_tools_can_be_turned_off(workdir: Path) -> None:
    k = start(workdir)
    try:
        k.execute("x = 1")
        k.execute(f"%%claude --scripted {SCRIPT} --no-kernel-tools\ntry the kernel tools",
                  timeout=120)
        assert settle(k) == "idle"
        assert k.eval("plan_widgets.get().host_tools") == "None"
        got = tool_results(k.cwd)
        assert "1 variable" not in got and "x  int" not in got
        assert "RESULT:" in replies(k)
        k.execute("%config ClaudeMagics.kernel_tools = False")
        k.execute(f"%%claude --scripted {SCRIPT} --session other\nhello", timeout=120)
        assert k.eval("plan_widgets.get('other').host_tools") == "None"
        k.execute("%config ClaudeMagics.kernel_tools = True")
        k.execute(f"%%claude --scripted {SCRIPT} --session third\nhello", timeout=120)
        assert k.eval("plan_widgets.get('third').host_tools is None") == "False"
        out = k.execute("%%claude --session third --no-kernel-tools\nhello", allow_error=True)
        assert out["reply"]["status"] == "error"
        assert "runs with the kernel tools; use --new" in out["text"]
    finally:
        stop(k)


def test_proposed_cells_appear_below_the_cell(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("import pandas as pd\ndf = pd.DataFrame({' A': [1]})")
    out = kernel.execute(f"%%claude --scripted {SCRIPT}\npropose two cells", timeout=120)
    payloads = [p for p in out["reply"].get("payload", []) if p.get("source") == "set_next_input"]
    assert payloads == [{
        "source": "set_next_input", "replace": False,
        "text": "# Proposal 1 of 2: clean the names\n"
                "df.columns = [c.strip().lower() for c in df.columns]\n\n"
                "# Proposal 2 of 2\ndf.head()\n",
    }], payloads
    assert "PROPOSED: Proposed. The code appears as a new cell below" in replies(kernel)
    assert kernel.eval("list(df.columns)") == "[' A']"  # nothing ran
    # the code is in the turn too, to copy (the proposal's line stays open)
    assert re.search(r'<details class="pw-tool"[^>]* open>', replies(kernel))
    # the next cell carries no stale proposal
    assert not kernel.execute("1 + 1")["reply"].get("payload")


def test_a_proposal_after_the_cell_returned_is_offered_to_copy(kernel: Kernel,
                                                              workdir: Path) -> None:
    out = kernel.execute(f"%%claude --scripted {SCRIPT} --background\npropose two cells",
                         timeout=120)
    assert not out["reply"].get("payload")
    assert settle(kernel) == "idle"
    assert "the code is shown in the turn's output for the user to copy" in tool_results(workdir)
    assert not kernel.execute("1 + 1")["reply"].get("payload")


def test_a_proposed_revision_of_a_notebook_cell_shows_the_change(nb_kernel: Kernel,
                                                                  workdir: Path) -> None:
    """Issue 43, point 2: a proposal that replaces a cell of the open notebook shows the change
    against that cell as it is on disk (the render path's diff, with line numbers), in the
    turn's tool line and to the model; a cell that is not there fails the call in one line."""
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [],
            "execution_count": None, "source": ["x = 1\n", "y = 2\n", "print(x + y)"]}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    (workdir / "analysis.ipynb").write_text(notebook)
    out = nb_kernel.execute(f"%%claude --scripted {SCRIPT}\nrevise cell c1", timeout=120)
    assert settle(nb_kernel) == "idle"
    payloads = [p["text"] for p in out["reply"].get("payload", [])
                if p.get("source") == "set_next_input"]
    assert payloads == ["# y is 3\nx = 1\ny = 3\nprint(x + y)\n"]
    got = tool_results(workdir)
    change = got[got.index("The change from cell c1 (cell 1 of 1) of "):].splitlines()
    assert change[1:] == ["@@ -1,3 +1,3 @@", "1 1   x = 1", "2   - y = 2", "  2 + y = 3",
                          "3 3   print(x + y)"], change
    assert "REVISED" in replies(nb_kernel)
    shown = unescape(re.sub(r"<[^>]+>", "", replies(nb_kernel)).replace("&#10;", "\n"))
    assert "2   - y = 2\n  2 + y = 3" in shown  # the turn's tool line shows the change
    assert (workdir / "analysis.ipynb").read_text() == notebook  # nothing was written
    # a cell that is not in the notebook: one line, nothing proposed
    out = nb_kernel.execute(f"%%claude --scripted {SCRIPT}\nrevise a missing cell", timeout=120)
    assert settle(nb_kernel) == "idle"
    assert not [p for p in out["reply"].get("payload", []) if p.get("source") == "set_next_input"]
    assert "the open notebook has no cell 'zz' (use a cell's id as Read shows it" in (
        tool_results(workdir))
