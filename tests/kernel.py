"""A real kernel driven over the Jupyter protocol, with widget messages sent as a frontend would.

Every wait here is bounded. iopub is read by a background thread into one list, so tests can
wait for "a widget with this description appeared" or "this cell went idle".
"""

from __future__ import annotations

import os
import queue
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager
from shown import Shown


class Kernel:
    """One ipykernel process with a scratch HOME and working directory."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None,
                 python: str | None = None, argv_prefix: list[str] | None = None) -> None:
        self.cwd = Path(cwd)
        self.home = self.cwd / ".home"
        self.home.mkdir(parents=True, exist_ok=True)
        full_env = {
            k: v for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE_")) and k != "CLAUDECODE"
        }
        full_env.update({
            "HOME": str(self.home),
            "IPYTHONDIR": str(self.home / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(self.home / ".runtime"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            # These tests click as a person does (widget messages), but this client answers
            # no probe: say someone is there (tests/test_unattended.py tests the detection).
            "PLAN_WIDGETS_UNATTENDED": "no",
        })
        full_env.update(env or {})
        self.km = KernelManager(kernel_name="python3")
        if python or argv_prefix:  # argv_prefix: e.g. setpriv, to start it with fewer rights
            # (jupyter_client 8 starts the kernel spec's argv; kernel_cmd is ignored)
            spec = self.km.kernel_spec
            assert spec is not None
            spec.argv = [*(argv_prefix or []), python or sys.executable, "-m",
                         "ipykernel_launcher", "-f", "{connection_file}"]
        self.km.start_kernel(cwd=str(self.cwd), env=full_env)
        self.kc = self.km.client()
        self.kc.start_channels()
        send, sending = self.kc.shell_channel.send, threading.Lock()

        def one_at_a_time(msg: Any) -> None:  # a frontend's reader thread may answer too
            with sending:
                send(msg)
        self.kc.shell_channel.send = one_at_a_time  # type: ignore[method-assign]
        self.kc.wait_for_ready(timeout=60)
        self.messages: list[dict[str, Any]] = []
        self.subshell_id: str | None = None  # where widget messages go (see comms_over_subshell)
        self.widgets: dict[str, dict[str, Any]] = {}
        self.widget_order: list[str] = []
        self.in_view = Shown(self.widgets)  # the models a frontend shows (tests/shown.py)
        self.sent_code: list[str] = []  # every cell sent (tests/kernel_reuse.py reads it)
        self._lock = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    # -- iopub -------------------------------------------------------------------------------
    def _pump(self) -> None:
        while not self._stop:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            except Exception:
                if self._stop:
                    return
                continue
            msg["_t"] = time.monotonic()
            with self._lock:
                self.messages.append(msg)
                t = msg["header"]["msg_type"]
                c = msg["content"]
                if t == "comm_open" and c.get("target_name") == "jupyter.widget":
                    state = dict(c.get("data", {}).get("state", {}))
                    self.widgets[c["comm_id"]] = state
                    self.widget_order.append(c["comm_id"])
                elif t == "comm_msg":
                    data = c.get("data", {})
                    if data.get("method") in ("update", "echo_update"):
                        self.widgets.setdefault(c["comm_id"], {}).update(data.get("state", {}))
                self.in_view.heard(msg)
                self._on_iopub(msg)
                self._lock.notify_all()

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        """What this frontend does with an iopub message (under the lock): nothing here; a
        frontend that answers or keeps outputs overrides it (tests/vscode.py)."""

    def wait_until(self, pred: Callable[[], Any], timeout: float = 60, what: str = "") -> Any:
        """Wait (bounded) until ``pred()`` is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = pred()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"timed out after {timeout} s waiting for {what or pred}")
                self._lock.wait(min(left, 0.2))

    # -- execution ---------------------------------------------------------------------------
    def execute(self, code: str, timeout: float = 120, allow_error: bool = False,
                store_history: bool = True) -> dict[str, Any]:
        """Run a cell and wait for it to finish; returns its outputs and reply
        (``store_history=False``: not in the kernel's history, no execution count)."""
        if store_history:
            self.sent_code.append(code)
        msg_id = self.kc.execute(code, store_history=store_history)

        def idle() -> bool:
            return any(
                m["parent_header"].get("msg_id") == msg_id
                and m["header"]["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                for m in self.messages
            )

        self.wait_until(idle, timeout, f"cell to finish: {code[:60]!r}")
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        out = self.outputs(msg_id)
        if reply["content"]["status"] != "ok" and not allow_error:
            raise AssertionError(f"cell failed: {reply['content']}\n{out['text']}")
        out["reply"] = reply["content"]
        return out

    def start(self, code: str) -> str:
        """Start a cell without waiting; returns its msg_id."""
        self.sent_code.append(code)
        return self.kc.execute(code)

    def outputs(self, msg_id: str) -> dict[str, Any]:
        """stdout/stderr text, display data and errors of one cell (so far)."""
        text, data = [], []
        with self._lock:
            for m in self.messages:
                if m["parent_header"].get("msg_id") != msg_id:
                    continue
                t, c = m["header"]["msg_type"], m["content"]
                if t == "stream":
                    text.append(c["text"])
                elif t in ("display_data", "execute_result", "update_display_data"):
                    data.append(c["data"])
                elif t == "error":
                    text.append("\n".join(c.get("traceback", [])))
        # "shown": the text/plain of every display and update (a turn's own lines)
        return {"text": "".join(text), "data": data,
                "shown": "\n".join(str(d.get("text/plain", "")) for d in data)}

    def eval(self, expr: str, timeout: float = 60) -> str:
        """Evaluate an expression in the kernel; returns its printed value."""
        out = self.execute(f"print(repr({expr}))", timeout=timeout)
        return out["text"].strip()

    # -- widgets -------------------------------------------------------------------------------
    def find_widgets(self, model: str | None = None, shown: bool = True,
                     **state: Any) -> list[str]:
        """Comm ids of widgets whose state matches, in creation order: only those a frontend
        shows (in a display, or under a model that is: tests/shown.py says why), unless
        ``shown=False`` (every model opened, shown or not)."""
        with self._lock:
            found = []
            for cid in self.widget_order:
                if shown and cid not in self.in_view:
                    continue
                s = self.widgets.get(cid, {})
                if model and s.get("_model_name") != model:
                    continue
                if all(s.get(k) == v for k, v in state.items()):
                    found.append(cid)
            return found

    def wait_widget(self, model: str | None = None, timeout: float = 60, index: int = -1,
                    count: int = 1, **state: Any) -> str:
        """Wait for the ``count``-th widget matching (shown: :meth:`find_widgets`); returns the
        chosen one's comm id."""
        ids = self.wait_until(
            lambda: (lambda f: f if len(f) >= count else None)(self.find_widgets(model, **state)),
            timeout, f"widget {model} {state} x{count}",
        )
        return ids[index]

    def comms_over_subshell(self) -> str:
        """From now on send widget messages over a kernel subshell, as JupyterLab 4.6 and
        Notebook 7.6 do by default (their setting "Kernel Comms over subshells",
        ``perCommTarget``: one subshell, made with ``create_subshell_request`` on the control
        channel, named in each message's header as ``subshell_id``). ipykernel 7.4 then runs
        the widgets' handlers on that subshell's thread. Returns the subshell's id."""
        msg = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(msg)
        deadline = time.monotonic() + 30
        while True:
            reply = self.kc.control_channel.get_msg(timeout=max(0.1, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                break
        assert reply["content"]["status"] == "ok", reply["content"]
        self.subshell_id = str(reply["content"]["subshell_id"])
        return self.subshell_id

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        """Send a comm_msg to the kernel, as the frontend does (over the subshell, once
        :meth:`comms_over_subshell` made one)."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        if self.subshell_id is not None:
            msg["header"]["subshell_id"] = self.subshell_id
        self.kc.shell_channel.send(msg)

    def click(self, comm_id: str) -> None:
        """Click a Button widget."""
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})

    def set_value(self, comm_id: str, value: Any) -> None:
        """Set a widget's value (a typed box's text, a ToggleButton's state) as the page does:
        a typed box's text (``widgets.typed.TypedBox``) as its ``custom`` message, the others'
        values as an ``update``."""
        with self._lock:
            typed = "multiline" in self.widgets.get(comm_id, {})
        if not typed:
            self.set_state(comm_id, value=value)
            return
        self.send_comm(comm_id, {"method": "custom", "content": {"value": value}})
        with self._lock:
            self.widgets[comm_id]["value"] = value

    def select(self, comm_id: str, index: int) -> None:
        """Pick option ``index`` of a selection widget (a click on one of RadioButtons)."""
        self.set_state(comm_id, index=index)

    def set_state(self, comm_id: str, **state: Any) -> None:
        """Update a widget's state as the frontend does (one ``update`` comm_msg)."""
        self.send_comm(comm_id, {"method": "update", "state": state, "buffer_paths": []})
        with self._lock:
            self.widgets.setdefault(comm_id, {}).update(state)

    def html_text(self) -> str:
        """All HTML widget values so far, joined (markers, card status lines)."""
        with self._lock:
            return "\n".join(str(s.get("value", "")) for s in self.widgets.values()
                             if s.get("_model_name") == "HTMLModel")

    def markdown_outputs(self) -> list[str]:
        """Every text/markdown shown inside Output widgets (in creation order)."""
        with self._lock:
            out = []
            for cid in self.widget_order:
                s = self.widgets.get(cid, {})
                if s.get("_model_name") == "OutputModel":
                    for o in s.get("outputs", []):
                        md = o.get("data", {}).get("text/markdown")
                        if md:
                            out.append(md)
            return out

    def forget(self, cwd: Path) -> None:
        """Start over as a new client of this kernel for a test in ``cwd`` (its kernel moved
        there: tests/kernel_reuse.py): no message, widget or cell of before."""
        with self._lock:
            self.cwd = Path(cwd)
            self.home = self.cwd / ".home"
            self.messages.clear()
            self.widgets.clear()
            self.widget_order.clear()
            self.in_view = Shown(self.widgets)
            self.subshell_id = None
            self.sent_code = []

    def interrupt(self) -> None:
        """The kernel's interrupt (SIGINT), as the frontend's stop button."""
        self.km.interrupt_kernel()

    def crash(self) -> None:
        """Kill the kernel at once (SIGKILL to its process group), as a crash or the OOM killer
        does: nothing runs in it any more. ``shutdown(now=True)`` is not that: jupyter_client
        interrupts the kernel first (SIGINT, then SIGKILL), and a kernel given the time handles
        the interrupt (a pending decision ends 'cancelled by interrupt'). SEEN: at load ~12 in
        2 of 5 runs, which failed tests that meant a crash."""
        import signal

        self.km.signal_kernel(signal.SIGKILL)
        self.km.provisioner.process.wait(timeout=10)  # type: ignore[union-attr]
        self.shutdown()

    def close(self) -> None:
        """A test's end: close every session of the kernel (bounded), then shut it down."""
        try:
            self.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                         timeout=30, allow_error=True)
        except Exception:  # a kernel that does not answer is shut down all the same
            pass
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the kernel (bounded); jupyter_client interrupts it first (see :meth:`crash`)."""
        self._stop = True
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
        self._thread.join(timeout=5)


def error_lines(k: Kernel) -> list[str]:
    """The error lines shown in turn views (the look's error colour, in a ``<div>``), as plain
    text."""
    import html
    import re

    from plan_widgets.render.look import ERROR

    with k._lock:
        return [html.unescape(re.sub(r"<[^>]+>", "", str(s.get("value", "")))).strip()
                for s in k.widgets.values()
                if s.get("_model_name") == "HTMLModel" and f"color:{ERROR}" in str(s.get("value"))
                and "<div" in str(s.get("value"))]


def requests_of(workdir: Path, pings: bool = False) -> list[dict[str, Any]]:
    """The requests the scripted model served for sessions in ``workdir``, oldest first."""
    import json

    out = []
    for f in (workdir / ".plan_widgets" / "sessions").glob("*.requests.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if pings or not r.get("ping"):
                out.append(r)
    return sorted(out, key=lambda r: r.get("t", 0))


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False

def write_script(folder: Path, text: str, name: str = "script.yaml") -> Path:
    """Write a scripted-model script (dedented YAML) into ``folder``; returns its path."""
    p = folder / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p
