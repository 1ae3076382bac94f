"""Outputs never land in another cell (issue 33): every display message of a ``%%claude``
cell carries that cell's parent header, also when the next cells are already queued, and an
update sent from a thread's callback after the cell returned goes to its own cell, not to the
newest request (ipykernel 7 falls back to that one: widgets/shared.py, ``shown_here``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e
HELLO = 'steps:\n  - repeat: true\n    reply:\n      - text: "Hello! You said: {user}"\n'


def _idle(k: Kernel, msg_id: str) -> Any:
    return k.wait_until(lambda: any(
        m["parent_header"].get("msg_id") == msg_id and m["header"]["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle" for m in k.messages), 60)


def _misplaced(k: Kernel, cell: str, others: set[str]) -> list[str]:
    """Display messages of ``cell``'s displays (by display id) that name another cell."""
    ids = {m["content"].get("transient", {}).get("display_id") for m in k.messages
           if m["parent_header"].get("msg_id") == cell
           and m["header"]["msg_type"] == "display_data"} - {None}
    return [f"{m['header']['msg_type']} {m['parent_header'].get('msg_type')}"
            for m in k.messages
            if m["header"]["msg_type"] in ("display_data", "update_display_data")
            and m["content"].get("transient", {}).get("display_id") in ids
            and m["parent_header"].get("msg_id") != cell] + [
        f"{m['header']['msg_type']} in a later cell" for m in k.messages
        if m["parent_header"].get("msg_id") in others
        and m["header"]["msg_type"] in ("display_data", "update_display_data")]


@pytest.mark.parametrize("run", range(2))
def test_first_claude_cells_back_to_back_keep_their_outputs(tmp_path: Path, run: int) -> None:
    (tmp_path / "hello.yaml").write_text(HELLO)
    k = Kernel(tmp_path)
    try:
        k.start("%load_ext plan_widgets")
        first = k.start("%%claude --scripted hello.yaml\nhello there")
        nxt = k.start("x = 1")
        third = k.start("import asyncio; await asyncio.sleep(1)")
        _idle(k, third)
        assert "Hello! You said: hello there" in k.outputs(first)["shown"]
        assert _misplaced(k, first, {nxt, third}) == []
        k.execute("import plan_widgets\nawait plan_widgets.get().close()")
    finally:
        k.shutdown()


def test_an_update_from_a_thread_goes_to_its_own_cell(tmp_path: Path) -> None:
    k = Kernel(tmp_path)
    try:
        cell = k.start(
            "import asyncio, threading\n"
            "from plan_widgets.widgets.shared import shown_here, update_display\n"
            "h = shown_here({'text/plain': 'first'})\n"
            "loop = asyncio.get_running_loop()\n"
            "threading.Timer(0.5, lambda: loop.call_soon_threadsafe(\n"
            "    update_display, h, {'text/plain': 'later'}, 'test')).start()")
        nxt = k.start("import asyncio; await asyncio.sleep(2)")
        _idle(k, nxt)
        later = [m for m in k.messages if m["header"]["msg_type"] == "update_display_data"]
        assert len(later) == 1 and later[0]["content"]["data"]["text/plain"] == "later"
        assert later[0]["parent_header"].get("msg_id") == cell, "the update went to the next cell"
    finally:
        k.shutdown()
