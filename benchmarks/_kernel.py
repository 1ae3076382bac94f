"""The benchmark's kernel: the test suite's :class:`Kernel` (real ipykernel, Jupyter protocol),
plus a raw iopub byte counter and helpers to time iopub messages.

``Kernel`` is imported from ``tests/kernel.py`` so the benchmarks drive the kernel exactly as
the end-to-end tests do (clicks are ``comm_msg`` on the shell channel, as a frontend sends).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import zmq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kernel import Kernel as _TestKernel  # noqa: E402

__all__ = ["BenchKernel", "ROOT"]


class BenchKernel(_TestKernel):
    """A test-suite kernel that can also count iopub bytes and read its own CPU and memory."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None,
                 python: str | None = None) -> None:
        full = {"PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        full.update(env or {})
        if python is None:
            super().__init__(cwd, env=full)
        else:
            # Another venv's kernel: its own kernelspec (``ipykernel install --sys-prefix``),
            # found first on JUPYTER_PATH (jupyter_client 8 ignores ``kernel_cmd``).
            spec = Path(python).parents[1] / "share" / "jupyter"
            old = os.environ.get("JUPYTER_PATH")
            os.environ["JUPYTER_PATH"] = str(spec)
            try:
                super().__init__(cwd, env=full)
            finally:
                if old is None:
                    os.environ.pop("JUPYTER_PATH", None)
                else:
                    os.environ["JUPYTER_PATH"] = old
        self._bytes = 0
        self.raw_arrival: dict[str, float] = {}
        """msg_id -> when the raw iopub socket got it (no deserialization on the way)."""
        self._counting = threading.Event()
        self._sock_stop = False
        self._sock_thread: threading.Thread | None = None

    # -- the kernel process ------------------------------------------------------------------
    @property
    def process(self) -> psutil.Process:
        pid = self.km.provisioner.process.pid  # type: ignore[union-attr]
        return psutil.Process(pid)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the kernel process (not its children)."""
        t = self.process.cpu_times()
        return t.user + t.system

    def rss(self) -> int:
        return int(self.process.memory_info().rss)

    def children_rss(self) -> dict[str, int]:
        """RSS of the kernel's child processes, summed by kind (CLI, scripted model, other)."""
        out: dict[str, int] = {}
        for c in self.process.children(recursive=True):
            try:
                cmd = " ".join(c.cmdline())
                rss = c.memory_info().rss
            except psutil.Error:
                continue
            kind = ("scripted" if "plan_widgets.scripted" in cmd
                    else "cli" if "claude" in cmd else "other")
            out[kind] = out.get(kind, 0) + rss
            out[kind + "_count"] = out.get(kind + "_count", 0) + 1
        return out

    # -- raw iopub bytes -----------------------------------------------------------------------
    def start_byte_counter(self) -> None:
        """Count every byte published on iopub (all frames) from a second SUB socket, and
        note when each message arrived there."""
        info = self.km.get_connection_info()
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        sock = ctx.socket(zmq.SUB)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        sock.connect(f"{info['transport']}://{info['ip']}:{info['iopub_port']}")

        def pump() -> None:
            poller = zmq.Poller()
            poller.register(sock, zmq.POLLIN)
            while not self._sock_stop:
                if poller.poll(100):
                    frames = sock.recv_multipart(copy=True)
                    t = time.monotonic()
                    if self._counting.is_set():
                        self._bytes += sum(len(f) for f in frames)
                    try:  # [topic..., <IDS|MSG>, signature, header, ...]
                        i = frames.index(b"<IDS|MSG>")
                        self.raw_arrival[json.loads(frames[i + 2])["msg_id"]] = t
                    except (ValueError, IndexError, KeyError):
                        pass
            sock.close(0)

        self._sock_thread = threading.Thread(target=pump, daemon=True)
        self._sock_thread.start()
        time.sleep(0.3)  # let the subscription settle

    def count_bytes(self, on: bool) -> None:
        if on:
            self._bytes = 0
            self._counting.set()
        else:
            self._counting.clear()

    @property
    def iopub_bytes(self) -> int:
        return self._bytes

    # -- timing helpers --------------------------------------------------------------------------
    def first_message(self, pred: Any, since: int = 0) -> dict[str, Any] | None:
        with self._lock:
            for m in self.messages[since:]:
                if pred(m):
                    return m
        return None

    def wait_message(self, pred: Any, since: int = 0, timeout: float = 60,
                     what: str = "") -> dict[str, Any]:
        return self.wait_until(lambda: self.first_message(pred, since), timeout, what)

    def mark(self) -> int:
        with self._lock:
            return len(self.messages)

    def shutdown(self) -> None:
        self._sock_stop = True
        try:
            self.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                         timeout=30, allow_error=True)
        except Exception:
            pass
        super().shutdown()
        if self._sock_thread is not None:
            self._sock_thread.join(timeout=2)


def card_open(k: BenchKernel, kind: str, since: int = 0) -> dict[str, Any] | None:
    """The ``comm_open`` of the first decision card of ``kind`` (plan, question, tool) seen
    after message ``since``. A card's classes arrive in the update right after its open."""
    cls = f"pw-card-{kind}"
    with k._lock:
        msgs = k.messages[since:]
        opens = {}
        for m in msgs:
            t = m["header"]["msg_type"]
            c = m["content"]
            if t == "comm_open":
                opens[c["comm_id"]] = m
                state = c.get("data", {}).get("state", {})
            elif t == "comm_msg":
                state = c.get("data", {}).get("state", {}) or {}
            else:
                continue
            if cls in (state.get("_dom_classes") or ()) and c["comm_id"] in opens:
                return opens[c["comm_id"]]
    return None


def wait_card(k: BenchKernel, kind: str, since: int = 0, timeout: float = 60) -> dict[str, Any]:
    return k.wait_until(lambda: card_open(k, kind, since), timeout, f"{kind} card")
