"""The presence probe at the kernel (``plan_widgets/ipython/presence.py``, issue 41 point 5):
a page's widget manager answers the quiet question (its ``jsdlink`` copies the label's value
back), and then the kernel opens no comm for an unknown target (the one JupyterLab logs
"Exception opening new comm" for); a kernel connection without JavaScript is found by the
fallback comm, which it closes; a client that answers nothing is an executor. A real kernel
over the Jupyter protocol; the link's copy is sent as ipywidgets' ``widget_link.ts`` sends
it (one ``update`` of the label's ``description``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e
ASK = ("from plan_widgets.ipython import unattended as u\n"
       "print(await u.someone_can_click(), u._presence.answered_by)")


class _Page(Kernel):
    """A page whose widget manager runs each ``jsdlink`` (copies source to target at once)."""

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        c = msg["content"]
        state = c.get("data", {}).get("state", {})
        if msg["header"]["msg_type"] == "comm_open" and state.get("_model_name") == \
                "DirectionalLinkModel":
            (src, src_attr), (dst, dst_attr) = state["source"], state["target"]
            value = self.widgets[src.removeprefix("IPY_MODEL_")][src_attr]
            self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {
                "comm_id": dst.removeprefix("IPY_MODEL_"),
                "data": {"method": "update", "state": {dst_attr: value}, "buffer_paths": []}}))


def _probe_comms(k: Kernel) -> list[str]:
    with k._lock:
        return [m["content"]["comm_id"] for m in k.messages
                if m["header"]["msg_type"] == "comm_open"
                and m["content"].get("target_name") == "plan_widgets.presence"]


def test_a_widget_manager_answers_quietly(workdir: Path) -> None:
    k = _Page(workdir, env={"PLAN_WIDGETS_UNATTENDED": "auto"})
    try:
        out = k.execute("%load_ext plan_widgets\n" + ASK)
        assert out["text"].split() == ["True", "widgets"], out["text"]
        k.execute("import asyncio\nawait asyncio.sleep(4)")  # past the fallback's time
        assert _probe_comms(k) == []  # nothing a page would log
        # the probe's two models are closed once answered
        # (models no display names: every opened one, not only what a page shows)
        probe = k.find_widgets("LabelModel", shown=False, value="plan_widgets presence") + \
            k.find_widgets("DirectionalLinkModel", shown=False)
        with k._lock:
            closed = {m["content"]["comm_id"] for m in k.messages
                      if m["header"]["msg_type"] == "comm_close"}
        assert len(probe) == 2 and set(probe) <= closed, (probe, closed)
    finally:
        k.shutdown()


def test_a_connection_without_widgets_is_found_by_the_fallback(workdir: Path) -> None:
    k = Kernel(workdir, env={"PLAN_WIDGETS_UNATTENDED": "auto"})
    try:
        k.execute("%load_ext plan_widgets")
        # answer the fallback as every @jupyterlab/services connection does: close it
        comm_id = k.wait_until(lambda: _probe_comms(k), 30, "the fallback comm")[0]
        k.kc.shell_channel.send(k.kc.session.msg("comm_close", {"comm_id": comm_id,
                                                                 "data": {}}))
        assert k.execute(ASK)["text"].split() == ["True", "kernel"]
    finally:
        k.shutdown()


def test_no_answer_is_no_one(workdir: Path) -> None:
    k = Kernel(workdir, env={"PLAN_WIDGETS_UNATTENDED": "auto"})
    try:
        out = k.execute("%load_ext plan_widgets\n" + ASK)
        assert out["text"].split() == ["False", "None"], out["text"]
        assert len(_probe_comms(k)) == 1  # the fallback was asked
    finally:
        k.shutdown()
