"""Issue 15 end to end: finished turns become static, their widgets close, saved notebooks show
every turn.

A real kernel over the Jupyter protocol, the real CLI, the scripted model. The notebook a
frontend would save is rebuilt from iopub as JupyterLab builds it: each cell's outputs in
order, every ``update_display_data`` applied to the outputs of its display id wherever they
are. No widget state is saved with it (JupyterLab's default), so anything still a widget view
in it would show as "model not found".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TURNS = 30


class Cell:
    """One executed cell: its source and its outputs as the frontend holds them."""

    def __init__(self, source: str, msg_id: str) -> None:
        self.source = source
        self.msg_id = msg_id
        self.outputs: list[dict[str, Any]] = []

    def displays(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if o["output_type"] == "display_data"]

    def text(self) -> str:
        return "".join(o.get("text", "") for o in self.outputs if o["output_type"] == "stream")


def frontend_outputs(k: Kernel, cells: list[Cell]) -> None:
    """Fill each cell's outputs from iopub, as a frontend does (display ids updated anywhere)."""
    by_id = {c.msg_id: c for c in cells}
    for c in cells:
        c.outputs = []
    with k._lock:
        messages = list(k.messages)
    for m in messages:
        t, content = m["header"]["msg_type"], m["content"]
        cell = by_id.get(m["parent_header"].get("msg_id"))
        display_id = (content.get("transient") or {}).get("display_id")
        if t == "update_display_data":
            for c in cells:
                for o in c.outputs:
                    if display_id and o.get("_display_id") == display_id:
                        o["data"] = content["data"]
        elif cell is None:
            continue
        elif t == "display_data":
            cell.outputs.append({"output_type": "display_data", "data": content["data"],
                                 "metadata": content.get("metadata", {}),
                                 "_display_id": display_id})
        elif t == "stream":
            cell.outputs.append({"output_type": "stream", "name": content["name"],
                                 "text": content["text"]})
        elif t == "error":
            cell.outputs.append({"output_type": "error", "ename": content["ename"],
                                 "evalue": content["evalue"], "traceback": content["traceback"]})


def run(k: Kernel, cells: list[Cell], source: str, timeout: float = 120) -> Cell:
    msg_id = k.start(source)
    cell = Cell(source, msg_id)
    cells.append(cell)
    k.wait_until(lambda: any(
        m["parent_header"].get("msg_id") == msg_id and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle" for m in k.messages), timeout,
        f"cell {source[:40]!r}")
    frontend_outputs(k, cells)
    return cell


def static_turn(cell: Cell) -> str:
    """The cell's turn output (its last display): static, with a Markdown rendering."""
    out = cell.displays()[-1]
    assert WIDGET_VIEW not in out["data"], f"still a widget view: {cell.source!r}"
    md = out["data"]["text/markdown"]
    assert 'class="pw-turn pw-static"' in md
    return md


def live_models(k: Kernel) -> list[str]:
    """The kernel's live widget models, by model name (shared layouts and styles left out)."""
    names = k.eval("sorted(x._model_name for x in __import__('ipywidgets').widgets.widget"
                   "._instances.values())")
    return [n for n in eval(names) if not n.endswith(("LayoutModel", "StyleModel"))]


def settle(k: Kernel, name: str = "default", timeout: float = 30) -> str:
    out = k.execute(f"print(await plan_widgets.get({name!r}).wait({timeout}))",
                    timeout=timeout + 30)
    return out["text"].strip()


def test_thirty_turns_static_closed_and_a_pending_card_still_works(
        kernel: Kernel, workdir: Path, tmp_path: Path) -> None:
    (workdir / "notes.txt").write_text("remember the milk\n")
    cells: list[Cell] = []
    # An earlier cell's plan waits for the user (another session), and a prompt queued behind
    # it shows its card again.
    plan_cell = run(kernel, cells, "%%claude --session planner --scripted dec_plan.yaml "
                                   "--mode acceptEdits --plan\nPlan the work")
    approve = kernel.wait_widget("ButtonModel", description="Approve")
    queued_cell = run(kernel, cells, "%%claude --session planner\nhello again")
    assert "A decision is pending (plan)" in queued_cell.text()
    kernel.wait_widget("ButtonModel", description="Approve", count=2)

    opened_before = sum(m["header"]["msg_type"] == "comm_open" for m in kernel.messages)
    prompts = [f"read the notes (turn {i})" if i % 3 == 0 else f"prompt {i}"
               for i in range(TURNS)]
    turn_cells = [run(kernel, cells, f"%%claude --scripted brief.yaml --mode acceptEdits\n{p}")
                  for p in prompts]
    assert settle(kernel) == "idle"

    # Every finished turn is static and complete: its text, its tool line, its footer.
    frontend_outputs(kernel, cells)
    model = kernel.eval("plan_widgets.get().model").strip("'")
    for i, (p, cell) in enumerate(zip(prompts, turn_cells, strict=True)):
        assert "Traceback" not in cell.text()
        md = static_turn(cell)
        assert f"<strong>claude</strong> (session default): {p}" in md
        assert "✓" in md and "in / " in md  # the footer: duration, tokens
        if i % 3 == 0:
            assert f"Reading the notes for {p}." in md
            assert re.search(r'<details class="pw-tool"[^>]*><summary><code>\S+ Read</code>', md)
            assert "remember the milk" in md  # the tool's result, in its details
            assert "The notes say: remember the milk." in md
        else:
            assert f"Answer to {p}: <strong>ok</strong>." in md
        # the cell's control bar: static in every cell but the newest, which stays live
        bar = cell.displays()[0]["data"]
        if cell is turn_cells[-1]:
            assert WIDGET_VIEW in bar
        else:
            assert WIDGET_VIEW not in bar and "pw-control-line" in bar["text/markdown"]
            assert re.sub(r"<[^>]+>", "", bar["text/markdown"]).split() == [
                "session", "default", "·", "mode", "Accept", "edits", "·", "model", model], bar

    # Their widget models are closed: what stays is the two sessions' control bars and the
    # cards still waiting (the plan card and its copy).
    opened = sum(m["header"]["msg_type"] == "comm_open" for m in kernel.messages)
    closed = {m["content"]["comm_id"] for m in kernel.messages
              if m["header"]["msg_type"] == "comm_close"}
    live = live_models(kernel)
    bar = ["ButtonModel", "HBoxModel", "HTMLModel", "HTMLModel", "HTMLModel",
           "ToggleButtonModel"]
    card = ["BoxModel", "ButtonModel", "ButtonModel", "ButtonModel", "HTMLModel", "OutputModel",
            "AnyModel", "ButtonModel", "ButtonModel", "DropdownModel"]
    # Approve, Edit, Keep planning (resting in acceptEdits: no "auto-accept" button); issue 22:
    # Comment on a line, Approve, start fresh, the Approve target
    # the planner's turn, still running: its box, its text, its tool line, its mode marker;
    # and the view of the prompt queued behind it (nothing in it yet)
    # and the line under it saying the plan waits (the cell returned)
    planner_turn = ["VBoxModel", "VBoxModel", "OutputModel", "OutputModel", "HTMLModel",
                    "HTMLModel"]
    queued = ["VBoxModel"]
    keep_place = ["AnyModel"]  # one for every card: it keeps the keyboard's place on a click
    assert sorted(live) == sorted(bar * 2 + card * 2 + planner_turn + queued + keep_place), live
    assert opened - opened_before >= 4 * TURNS and len(closed) >= 4 * TURNS

    # The pending card in the first cell still works.
    kernel.click(approve)
    assert settle(kernel, "planner", 60) == "idle"
    assert (workdir / "work.py").exists()
    frontend_outputs(kernel, cells)
    md = static_turn(plan_cell)
    assert "pw-card pw-card-plan pw-static" in md and "Approved" in md
    assert "Plan: add work.py" in md and "Done: work.py written." in md
    copy = queued_cell.displays()[0]["data"]  # the card shown again, decided: static too
    assert WIDGET_VIEW not in copy and "Approved" in copy["text/markdown"]
    assert "Hello again to you!" in static_turn(queued_cell)
    # Now only the control bars are live (the planner's without Rewind files: its turn wrote,
    # but the prompt queued behind it ran after and changed nothing)
    # (and the cards' one shared keep-place widget, made once per kernel like the shared
    # layouts: widgets/keep_place.py)
    assert sorted(live_models(kernel)) == sorted(bar * 2 + keep_place), live_models(kernel)

    # The saved notebook (no widget state) exported to HTML shows every turn.
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    nb = nbformat.v4.new_notebook()
    for c in cells:
        nc = nbformat.v4.new_code_cell(c.source)
        for o in c.outputs:
            if o["output_type"] == "display_data":
                nc.outputs.append(nbformat.v4.new_output(
                    "display_data", data=o["data"], metadata=o["metadata"]))
            elif o["output_type"] == "stream":
                nc.outputs.append(nbformat.v4.new_output("stream", name=o["name"],
                                                         text=o["text"]))
        nb.cells.append(nc)
    nbformat.validate(nb)
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    views = [o for c in cells for o in c.displays() if WIDGET_VIEW in o["data"]]
    assert len(views) == 2  # only the newest cell of each session: its live control bar
    html, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(saved, as_version=4))
    for p in prompts:
        assert (f"Answer to {p}" in html) != p.startswith("read")
    assert html.count("The notes say: remember the milk.") == TURNS // 3
    assert html.count("Read</code> ") >= TURNS // 3  # the tool lines, expandable
    assert html.count("pw-card-plan pw-static") == 2 and "Hello again to you!" in html
    assert "model not found" not in html and "Loading widget" not in html


def test_a_question_card_becomes_static_with_its_answers(kernel: Kernel, workdir: Path) -> None:
    cells: list[Cell] = []
    cell = run(kernel, cells, "%%claude --scripted dec_question.yaml\nPlease ask me about it")
    kernel.wait_widget("CheckboxModel", count=3)  # Small, Medium, Large (several)
    kernel.select(kernel.wait_widget("RadioButtonsModel"), 1)  # Blue (one choice)
    kernel.set_value(kernel.find_widgets("CheckboxModel")[1], True)  # Medium
    kernel.click(kernel.wait_widget("ButtonModel", description="Submit"))
    assert settle(kernel) == "idle"
    frontend_outputs(kernel, cells)
    md = static_turn(cell)
    text = re.sub(r"<[^>]+>", "", md)
    # each option once, its description beside it, the chosen ones marked
    for line in ("○ Red — warm and loud", "◉ Blue — calm and cool", "☐ Small — 320 px",
                 "☑ Medium — 768 px", "☐ Large — 1440 px"):
        assert text.count(line) == 1, (line, text)
    assert "Answered" in text and "Got it. ANSWERS:" in text
    assert not [n for n in live_models(kernel) if n not in (
        "ButtonModel", "HBoxModel", "HTMLModel", "ToggleButtonModel", "AnyModel")]
