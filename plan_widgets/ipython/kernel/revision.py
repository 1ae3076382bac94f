"""A proposed cell that would replace a cell of the open notebook: the change, as a diff
(issue 43, point 2: "the same for the open notebook's proposed cells where they differ").

The agent cannot edit the open notebook's file (the gate refuses it: the frontend holds the
notebook and would overwrite it), so it proposes cells instead (``propose_cell``). When a
proposal revises a cell that is there (``replaces``: the cell's id as Read shows it, or
``cell-N``), the notebook is read as it is on disk (bounded, off the loop), and the change
from that cell's source to the proposal is the render path's file diff (line numbers, a few
lines of context, long runs folded): the turn's tool line shows it, and the model reads it.
"""

from __future__ import annotations

import asyncio

from ...agent.ondisk import read_notebook
from ...agent.seam import ToolFailure
from ...render.change import find_cell
from ...render.filediff import file_diff_text
from ...render.paths import home_short


async def revision(notebook: str | None, cell_id: str, code: str) -> str:
    """What the proposal changes in cell ``cell_id`` of ``notebook``, as lines to read
    (a wrong id or an unreadable notebook fails the call in one line: nothing is proposed)."""
    if not notebook:
        raise ToolFailure("no open notebook is known to this kernel: propose the cell without "
                          "replaces")
    nb = await asyncio.to_thread(read_notebook, notebook)
    if nb.cells is None:
        raise ToolFailure(f"could not read the open notebook {home_short(notebook)}: "
                          f"{nb.why or nb.state}; propose the cell without replaces")
    i = find_cell(nb.cells, cell_id)
    if i is None:
        raise ToolFailure(f"the open notebook has no cell {cell_id!r} (use a cell's id as Read "
                          "shows it, or cell-N); nothing was proposed")
    where = f"cell {cell_id} (cell {i + 1} of {len(nb.cells)}) of {home_short(notebook)}"
    old = nb.cells[i].source
    if old.strip() == code.strip():
        return f"It is the same as {where}: nothing would change."
    lines = file_diff_text(old.rstrip("\n"), code.rstrip("\n"))
    return f"The change from {where}:\n" + "\n".join(text for _sign, text in lines)
