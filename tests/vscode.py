"""A kernel client that behaves as VS Code's Jupyter extension does, by its source
(microsoft/vscode-jupyter at 3d24702e, @jupyterlab/services 7.5.1; docs/frontends.md, "VS
Code"): VS Code cannot be run here, so its rules are played over the real Jupyter protocol.

- **Comms.** Its kernel connections are stock ``KernelConnection``s with ``handleComms: true``
  (``src/kernels/raw/session/rawKernelConnection.node.ts:715``, the widget webview's
  ``src/webviews/webview-side/ipywidgets/kernel/kernel.ts:162``): a comm the kernel opens for a
  target they do not know is closed at once, by each of them (twice). ``jupyter.widget`` is
  known (``ipyWidgetMessageDispatcher.ts:95``). Played here: the webview's widget manager
  builds models, but no JavaScript runs (a ``jsdlink`` copies nothing: the worst case).
- **No control comm.** It never opens ``jupyter.widget.control``.
- **No subshells.** ``supportsSubshells`` is false and ``requestCreateSubshell`` throws
  (``rawKernelConnection.node.ts:128-149``, ``kernel.ts:288-309``): every widget message
  comes on the main shell.
- **Outputs.** Each cell's handler takes an iopub message only if its parent is a request the
  cell owns: its ``execute_request``, or a ``comm_msg`` sent after the cell finished on a comm
  the cell opened (``cellExecutionMessageHandler.ts:398-421``, ``:544``); anything else is
  dropped. ``update_display_data`` replaces the NEWEST output shown with its display id,
  whichever cell holds it (``cellDisplayIdTracker.ts:73``, ``cellExecutionMessageHandler.ts:
  1135-1150``); older outputs of that id keep what they had.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel import Kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KNOWN_TARGETS = ("jupyter.widget",)


class VSCodeCell:
    """One executed cell as VS Code holds it: its outputs, and the requests it owns."""

    def __init__(self, source: str, msg_id: str) -> None:
        self.source = source
        self.msg_id = msg_id
        self.owned_requests = {msg_id}
        self.owned_comms: set[str] = set()
        self.completed = False
        self.outputs: list[dict[str, Any]] = []


class VSCode(Kernel):
    """A real kernel driven as VS Code drives it (see the module's docstring)."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.cells: list[VSCodeCell] = []
        self.display_ids: dict[str, dict[str, Any]] = {}  # display id -> its newest output
        self.closed_by_us: list[str] = []  # comm ids this client closed (unknown targets)
        self.closed_models: set[str] = set()  # comm ids the kernel closed
        # detect, as a VS Code user's kernel does (tests/kernel.py says someone is there)
        super().__init__(cwd, env={"PLAN_WIDGETS_UNATTENDED": "auto", **(env or {})})

    # -- what the extension does with each iopub message -------------------------------------
    def _on_iopub(self, msg: dict[str, Any]) -> None:
        t, c = msg["header"]["msg_type"], msg["content"]
        parent = msg["parent_header"].get("msg_id")
        if t == "comm_open" and c.get("target_name") not in KNOWN_TARGETS:
            for _ in range(2):  # the extension's connection, then the webview's
                self._shell("comm_close", {"comm_id": c["comm_id"], "data": {}})
            self.closed_by_us.append(c["comm_id"])
            return
        if t == "comm_close":
            self.closed_models.add(c["comm_id"])
        cell = next((x for x in self.cells if parent in x.owned_requests), None)
        if cell is None:
            return  # no cell's handler takes it
        if t == "status" and parent == cell.msg_id and c["execution_state"] == "idle":
            cell.completed = True
        elif t == "comm_open":
            cell.owned_comms.add(c["comm_id"])
        elif t in ("display_data", "execute_result"):
            out = {"data": c["data"], "display_id": (c.get("transient") or {}).get("display_id")}
            cell.outputs.append(out)
            if out["display_id"]:
                self.display_ids[out["display_id"]] = out  # the newest one only
        elif t == "update_display_data":
            target = self.display_ids.get((c.get("transient") or {}).get("display_id", ""))
            if target is not None:
                target["data"] = c["data"]
        elif t == "stream":
            cell.outputs.append({"data": {"text/plain": c["text"]}, "display_id": None})
        elif t == "error":
            cell.outputs.append({"data": {"text/plain": f"{c['ename']}: {c['evalue']}"},
                                 "display_id": None, "error": True})

    def _shell(self, msg_type: str, content: dict[str, Any]) -> dict[str, Any]:
        msg = self.kc.session.msg(msg_type, content)
        self.kc.shell_channel.send(msg)  # the main shell: never a subshell
        return msg

    # -- what a person does --------------------------------------------------------------------
    def run(self, source: str, timeout: float = 120) -> VSCodeCell:
        """Run a cell and wait until it finished; returns it as VS Code shows it."""
        cell = self.run_all([source])[0]
        self.finished(cell, timeout)
        return cell

    def run_all(self, sources: list[str]) -> list[VSCodeCell]:
        """Run All: every cell's ``execute_request`` sent at once, none waited for."""
        cells = []
        with self._lock:
            for source in sources:
                cell = VSCodeCell(source, self.kc.execute(source))
                self.cells.append(cell)
                cells.append(cell)
        return cells

    def finished(self, cell: VSCodeCell, timeout: float = 120) -> None:
        """Wait (bounded) until ``cell`` finished."""
        self.wait_until(lambda: cell.completed, timeout, f"cell {cell.source[:40]!r}")

    def comms_over_subshell(self) -> str:
        raise AssertionError("VS Code has no kernel subshells (requestCreateSubshell throws)")

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        with self._lock:
            msg = self._shell("comm_msg", {"comm_id": comm_id, "data": data})
            for cell in self.cells:  # a request of the cell that opened the comm, once done
                if cell.completed and comm_id in cell.owned_comms:
                    cell.owned_requests.add(msg["header"]["msg_id"])

    # -- what the person sees ------------------------------------------------------------------
    def shown(self, cell: VSCodeCell) -> list[str]:
        """Each output of ``cell`` as its text: Markdown/plain for a static output; a widget
        view as ``[widget MODEL]`` while its model is open, ``[gone]`` once it closed (VS Code
        then shows an empty output, or "model not found" after a reload)."""
        with self._lock:
            out = []
            for o in cell.outputs:
                view = o["data"].get(WIDGET_VIEW)
                if view is not None:
                    mid = view.get("model_id")
                    name = self.widgets.get(mid, {}).get("_model_name", "?")
                    out.append("[gone]" if mid in self.closed_models else f"[widget {name}]")
                else:
                    d = o["data"]
                    out.append(str(d.get("text/markdown") or d.get("text/html")
                                   or d.get("text/plain", "")))
            return out
