"""Execute the example notebooks on the scripted model and save them with outputs that tell
the truth: ``.venv/bin/python scripts/save_notebooks.py [notebooks/NN_name.ipynb ...]``
(default: every ``notebooks/[0-9]*.ipynb``).

Why not ``jupyter nbconvert --execute``: nbclient reads only the messages of the cell it is
running, so the updates a finished turn sends to an earlier cell's display (its static view,
the plan card's outcome, the control line) were dropped, and the saved notebooks showed cards
"Waiting for you" that later cells had approved, and ``mode ? model ?``. Here every
``update_display_data`` is applied to the output of its display id wherever it is, and a late
output joins the cell it belongs to, as JupyterLab does.

What is saved is what a frontend without widget state shows (the notebooks keep none): each
display's Markdown and text fallbacks, the widget view left out (it could only say "model not
found"). The kernel runs in a scratch HOME with its temporary folder inside it, so the CLI's
plan files and the notebooks' scratch folders are under that HOME, which the saved outputs
write ``~``: no path of the machine that ran them is kept.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT = 300.0  # seconds a cell may run
SETTLE = 2.0  # seconds of quiet after the last cell (late updates of earlier cells)


class Run:
    """One kernel executing one notebook, its cells' outputs kept as a frontend keeps them."""

    def __init__(self, nb: Any, home: Path) -> None:
        self.nb = nb
        self.home = home
        self.by_msg: dict[str, Any] = {}  # execute request id -> cell
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PLAN_WIDGETS_"))
               and k != "CLAUDECODE"}
        scratch = home / "scratch"
        scratch.mkdir(parents=True)
        env.update({"HOME": str(home), "TMPDIR": str(scratch),
                    "IPYTHONDIR": str(home / ".ipython"),
                    "JUPYTER_RUNTIME_DIR": str(home / ".runtime"),
                    "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
        # no one clicks here: each notebook decides by the decider it shows
        # (notebooks/README.md, "They are tests")
        self.km = KernelManager(kernel_name="python3")
        spec = self.km.kernel_spec
        assert spec is not None
        spec.argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        self.km.start_kernel(cwd=str(NOTEBOOKS), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)

    def execute(self, cell: Any, count: int) -> None:
        """Run ``cell``; its outputs (and late ones of earlier cells) as they come."""
        cell.outputs = []
        msg_id = self.kc.execute(cell.source, allow_stdin=False)
        self.by_msg[msg_id] = cell
        deadline = time.monotonic() + CELL_TIMEOUT
        while not self._pump(msg_id, deadline):
            pass
        reply = self.kc.get_shell_msg(timeout=CELL_TIMEOUT)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=CELL_TIMEOUT)
        cell.execution_count = count
        for o in cell.outputs:
            if o.output_type == "execute_result":
                o.execution_count = count
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell {count} failed: {reply['content'].get('evalue')}\n"
                               f"{cell.source[:200]}")

    def settle(self, seconds: float = SETTLE) -> None:
        """Take the messages that come once the last cell is done."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._pump(None, end)

    def _pump(self, msg_id: str | None, deadline: float) -> bool:
        """Handle one iopub message; True once cell ``msg_id`` went idle."""
        left = deadline - time.monotonic()
        if left <= 0:
            if msg_id is None:
                return True
            raise TimeoutError(f"a cell ran longer than {CELL_TIMEOUT:g} s")
        try:
            m = self.kc.get_iopub_msg(timeout=min(left, 1.0))
        except queue.Empty:
            return False
        t, c = m["header"]["msg_type"], m["content"]
        parent = m["parent_header"].get("msg_id")
        if t == "status":
            return parent == msg_id and c["execution_state"] == "idle"
        display_id = (c.get("transient") or {}).get("display_id")
        if t == "update_display_data":
            for cell in self.by_msg.values():
                for o in cell.outputs:
                    if display_id and o.get("metadata", {}).get("_display_id") == display_id:
                        o.data = c["data"]
            return False
        cell = self.by_msg.get(parent)
        if cell is None:
            return False
        if t == "clear_output":
            cell.outputs = []
        elif t == "stream":
            last = cell.outputs[-1] if cell.outputs else None
            if last is not None and last.output_type == "stream" and last.name == c["name"]:
                last.text += c["text"]
            else:
                cell.outputs.append(nbformat.v4.new_output("stream", name=c["name"],
                                                           text=c["text"]))
        elif t in ("display_data", "execute_result", "error"):
            content = {k: v for k, v in c.items() if k != "transient"}
            out = nbformat.v4.output_from_msg({"header": m["header"], "content": content})
            if display_id:
                out.setdefault("metadata", {})["_display_id"] = display_id
            cell.outputs.append(out)
        return False


def _clean(value: Any, home: str) -> Any:
    """``value`` with the scratch HOME written ``~`` (strings, lists and dicts in it)."""
    if isinstance(value, str):
        return value.replace(home, "~")
    if isinstance(value, list):
        return [_clean(v, home) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v, home) for k, v in value.items()}
    return value


def _finish(nb: Any, home: Path) -> None:
    """What is saved: no widget views, no display ids, the scratch HOME as ``~``."""
    for p in {str(home), str(home.resolve())}:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            kept = []
            for o in cell.outputs:
                if "metadata" in o:
                    o.metadata.pop("_display_id", None)
                if "data" in o:
                    o.data.pop(WIDGET_VIEW, None)
                    if not o.data:
                        continue
                    o.data = _clean(dict(o.data), p)
                if "text" in o:
                    o.text = _clean(o.text, p)
                if "traceback" in o:
                    o.traceback = _clean(o.traceback, p)
                kept.append(o)
            cell.outputs = kept
    nb.metadata.pop("widgets", None)


def save(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    home = Path(tempfile.mkdtemp(prefix="pw-notebook-home-"))
    run = Run(nb, home)
    try:
        count = 0
        for cell in nb.cells:
            if cell.cell_type == "code":
                count += 1
                run.execute(cell, count)
        run.settle()
    finally:
        run.close()
    _finish(nb, home)
    shutil.rmtree(home, ignore_errors=True)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="the notebooks to run and save (default: notebooks/[0-9]*.ipynb)")
    args = ap.parse_args()
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    for p in paths:
        started = time.monotonic()
        try:
            save(p)
        except Exception as e:  # one line per notebook; the file is left as it was
            print(f"FAILED {p.relative_to(REPO)}: {e}", file=sys.stderr)
            return 1
        print(f"saved  {p.relative_to(REPO)} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
