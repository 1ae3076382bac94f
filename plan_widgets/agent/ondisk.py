"""The file a permission card is about, as it is on disk when the card opens.

A Write, Edit or MultiEdit card shows the change against the file as it is now, and a
NotebookEdit card shows the cell it replaces, inserts after or deletes (issue 43): so the gate
reads the file once, when the decision opens, in a worker thread (a file on a slow or hung
network mount must not stall the kernel's loop), bounded in size and in time. The snapshot
stays with the decision: the finished turn's static card shows the change that was decided,
not the file as it is after the write.

What is read is the file the model asks to change. The CLI refuses a Write of a file the
conversation has not Read, but only after it asked permission (measured, CLI 2.1.337: the
card opened for such a Write), so a card may show a file the model has not seen: it is shown
to the person deciding and kept in the notebook's output, never sent to the model nor written
to the session's log.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MAX_READ = 256_000
"""Bytes read at most: a larger file is said to be large. A diff of it on a card is little
help, and it is drawn on the kernel's loop: a 790 KB file rewritten whole took 1.1 s to draw
(20,000 lines), one of 256 KB about 0.3 s (render/filediff.py)."""
READ_SECONDS = 5.0
"""How long the card waits for the read (a hung mount): then it says the file was not read."""

State = Literal["text", "missing", "binary", "large", "unreadable"]


@dataclass(frozen=True)
class Cell:
    """One cell of a notebook on disk."""

    id: str | None
    cell_type: str
    source: str


@dataclass(frozen=True)
class OnDisk:
    """The file as the card found it."""

    path: str
    """Absolute."""
    state: State
    text: str = ""
    """The content (``text``; a notebook's raw JSON is not kept, its cells are)."""
    size: int = 0
    """Bytes on disk."""
    cells: tuple[Cell, ...] | None = None
    """A notebook's cells (None: not a notebook, or not readable as one)."""
    why: str = ""
    """Why it was not read (``unreadable``)."""


def absolute(path: str, cwd: str | None) -> Path:
    p = Path(os.path.expanduser(path))
    return p if p.is_absolute() else Path(cwd or os.getcwd()) / p


def read_file(path: str, cwd: str | None = None) -> OnDisk:
    """``path`` as it is now: its text, or why there is none (blocking: call in a thread)."""
    p = absolute(path, cwd)
    where = str(p)
    try:
        size = p.stat().st_size
        if not p.is_file():
            return OnDisk(where, "unreadable", why="not a regular file")
        if size > MAX_READ:
            return OnDisk(where, "large", size=size)
        with p.open("rb") as f:
            data = f.read(MAX_READ + 1)
    except FileNotFoundError:
        return OnDisk(where, "missing")
    except OSError as e:
        return OnDisk(where, "unreadable", why=e.strerror or type(e).__name__)
    if b"\0" in data[:8192]:
        return OnDisk(where, "binary", size=len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return OnDisk(where, "binary", size=len(data))
    return OnDisk(where, "text", text=text, size=len(data))


def _source(src: Any) -> str:
    return "".join(map(str, src)) if isinstance(src, list) else str(src or "")


def read_notebook(path: str, cwd: str | None = None) -> OnDisk:
    """A notebook's cells as they are now (blocking: call in a thread). Read as JSON (the
    format's cells are a list of ``{id, cell_type, source}``; nbformat's validation adds
    nothing a card shows)."""
    found = read_file(path, cwd)
    if found.state != "text":
        return found
    try:
        nb = json.loads(found.text)
        cells = tuple(Cell(str(c["id"]) if c.get("id") is not None else None,
                           str(c.get("cell_type") or "code"), _source(c.get("source")))
                      for c in nb["cells"] if isinstance(c, dict))
    except (ValueError, KeyError, TypeError, AttributeError):
        return OnDisk(found.path, "unreadable", size=found.size, why="not a notebook's JSON")
    return OnDisk(found.path, "text", size=found.size, cells=cells)


async def snapshot(tool: str, tool_input: dict[str, Any], cwd: str | None) -> OnDisk | None:
    """The file a Write, Edit, MultiEdit or NotebookEdit call is about, read off the loop
    (None for other tools, or no path)."""
    notebook = tool == "NotebookEdit"
    if tool not in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        return None
    path = tool_input.get("notebook_path" if notebook else "file_path")
    if not isinstance(path, str) or not path:
        return None
    read = read_notebook if notebook else read_file
    try:
        return await asyncio.wait_for(asyncio.to_thread(read, path, cwd), READ_SECONDS)
    except asyncio.TimeoutError:
        return OnDisk(str(absolute(path, cwd)), "unreadable",
                      why=f"not read within {READ_SECONDS:g} s")
