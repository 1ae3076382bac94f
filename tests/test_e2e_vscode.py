"""Issue 41, point 4: a person in VS Code, played by a kernel client that follows VS Code's
source (tests/vscode.py; docs/frontends.md): widget messages on the main shell only, no
``jupyter.widget.control``, a comm for an unknown target closed at once (twice), no
JavaScript run by the widget manager, and ``update_display_data`` applied only to the newest
output of its display id, only when its parent is a request the cell owns.

The detection is on (no override): the kernel must find the person, each card must be
decided by a click on the main shell, the turn must finish, and the ``%%claude`` cell must end
holding its static record (no widget view left blank), with nothing left waiting. The real
CLI, a real kernel, the scripted model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_e2e_plan_modes import _pick
from vscode import VSCode, VSCodeCell

pytestmark = pytest.mark.e2e
LOAD = "%load_ext plan_widgets\nimport plan_widgets"


@pytest.fixture
def vscode(workdir: Path) -> Iterator[VSCode]:
    k = VSCode(workdir)
    try:
        yield k
    finally:
        k.close()


def _settled(k: VSCode, cell: VSCodeCell, *texts: str) -> str:
    """Wait until ``cell`` shows its control bar (live while the session lives) and its turn's
    static record holding ``texts``, and no output gone blank; returns the record's text."""
    def done() -> bool:
        shown = k.shown(cell)
        static = [s for s in shown if not s.startswith("[")]
        return (shown[:1] == ["[widget HBoxModel]"] and "[gone]" not in shown
                and len(static) == len(shown) - 1
                and all(t in _plain(static) for t in texts))

    try:
        k.wait_until(done, 60, f"the cell's static record with {texts}")
    except TimeoutError:
        raise AssertionError(f"the cell shows: {k.shown(cell)}") from None
    return _plain(k.shown(cell)[1:])


def _plain(outputs: list[str]) -> str:
    """The outputs' text, as read (tags dropped)."""
    return re.sub(r"<[^>]+>", "", "\n".join(outputs))


def _nothing_waits(k: VSCode) -> None:
    """The session is idle, no decision is open, the kernel found a person (by the fallback
    question: no JavaScript ran), no control comm was opened; once the session closes, no
    output of any cell went blank."""
    after = k.run("s = plan_widgets.get()\n"
                  "from plan_widgets.ipython import unattended as u\n"
                  "import ipywidgets\n"
                  "print(await s.wait(60), s.pending, u._presence.answered_by,\n"
                  "      ipywidgets.Widget._control_comm)")
    assert k.shown(after) == ["idle None kernel None\n"], k.shown(after)
    k.run("await plan_widgets.get().close()")
    for cell in k.cells:  # nothing went blank (the newest bar stays, as in JupyterLab)
        assert "[gone]" not in k.shown(cell), k.shown(cell)


def test_vscode_run_all_approve_a_plan_and_allow_a_write(vscode: VSCode,
                                                         workdir: Path) -> None:
    k = vscode
    # Run All: the extension, the agent's step and a cell that uses its work, sent at once
    _, cell, after = k.run_all([
        LOAD, "%%claude --scripted plan_modes.yaml --plan --mode acceptEdits\nPlan a greeting",
        "print('after', open('hello.py').read())"])
    _pick(k, "Yes, manually approve edits")  # a change, on the main shell
    k.click(k.wait_widget("ButtonModel", description="Approve"))
    k.click(k.wait_widget("ButtonModel", description="Allow", timeout=60))
    assert k.wait_until(lambda: (workdir / "hello.py").exists(), 60)
    for c in (cell, after):
        k.finished(c)  # nothing hangs
    # the probe was answered by this frontend's stock kernel connection (twice, at once)
    assert k.closed_by_us, "the kernel opened no probe comm"
    # the cell after the agent's step saw its work (Run All waits: ipython/runall.py; a click
    # on the main shell reaches the waiting cell with ipykernel 7.4), and holds only its own
    assert _plain(k.shown(after)).split() == ["after", "print('hello')"], k.shown(after)
    record = _settled(k, cell, "Done:")
    assert re.search(r"(?i)approved", record), record
    assert re.search(r"(?i)allowed", record), record
    assert "Plan: greet" in record, record
    _nothing_waits(k)


def test_vscode_approve_start_fresh(vscode: VSCode, workdir: Path) -> None:
    k = vscode
    for name in ("explore.txt", "explore2.txt"):
        (workdir / name).write_text("EXPLORE-7731 line 1\nEXPLORE-7731 more 1\n",
                                    encoding="utf-8")
    k.run(LOAD)
    (cell,) = k.run_all(["%%claude --scripted plan_fresh.yaml --plan --mode acceptEdits\n"
                         "Plan a greeting"])
    k.click(k.wait_widget("ButtonModel", description="Approve, start fresh"))
    assert k.wait_until(lambda: (workdir / "hello.py").exists(), 60)
    k.finished(cell)
    record = _settled(k, cell, "Done: hello.py written.")
    # the planning turn and the fresh one, both in the plan's cell; the card decided
    assert "started fresh: the plan runs in a new conversation" in record, record
    assert "Start fresh: the approved plan, in a new conversation" in record, record
    assert record.index("Plan proposed") < record.index("Done: hello.py written."), record
    _nothing_waits(k)
