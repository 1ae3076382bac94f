"""Which widget models a frontend shows: those a display puts in a cell (or in an ``Output``),
and everything their state names (children, a box's layout, ...), transitively.

Why the test clients find only these: a model that is open but in no display is nothing a
person can see or click. The kernel may open models ahead of need (a plan card's fixed
controls, opened while the model writes the plan: ``widgets/kinds/plan_spares.py``, issue
46); such a model has no callback until a card takes it, and a test that clicked the newest
``Approve`` model it heard of could click one of those and wait for nothing. JupyterLab and
Notebook 7 render a widget view only for a model a display names and for the models under it
(``IPY_MODEL_<id>`` references in its state); the helpers filter as they do. A marker the card
would set on the controls it takes was the other way: it is state a frontend knows nothing
about, one more ``comm_msg`` per control after the card, and a helper that forgot to read it
would race again.

A model counts from the first message that makes it reachable and stays counted (a turn that
turns static replaces its display by HTML: its buttons are closed, and tests still read them,
e.g. that they ended disabled). Models a display names before their ``comm_open`` arrives are
remembered until it does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
DISPLAYS = ("display_data", "execute_result", "update_display_data")


def references(obj: Any) -> Iterator[str]:
    """The model ids ``obj`` (a widget's state, a display's data) names."""
    if isinstance(obj, str):
        if obj.startswith("IPY_MODEL_"):
            yield obj[len("IPY_MODEL_"):]
    elif isinstance(obj, dict):
        view = obj.get(WIDGET_VIEW)
        if isinstance(view, dict) and isinstance(view.get("model_id"), str):
            yield view["model_id"]
        for v in obj.values():
            yield from references(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from references(v)


class Shown:
    """The ids of the models shown so far, kept up to date by :meth:`heard` (called with each
    iopub message, after the client's table of widget states took it in)."""

    def __init__(self, widgets: dict[str, dict[str, Any]]) -> None:
        self.widgets = widgets  # the client's table: comm id -> state
        self.ids: set[str] = set()
        self._awaited: set[str] = set()  # named by something shown, not opened yet

    def __contains__(self, comm_id: object) -> bool:
        return comm_id in self.ids

    def heard(self, msg: dict[str, Any]) -> None:
        kind, content = msg["header"]["msg_type"], msg.get("content", {})
        if kind == "comm_open":
            if content.get("comm_id") in self._awaited:
                self._awaited.discard(content["comm_id"])
                self._show([content["comm_id"]])
        elif kind == "comm_msg":
            if content.get("comm_id") in self.ids:
                self._show(references(content.get("data", {}).get("state", {})))
        elif kind in DISPLAYS:
            self._show(references(content.get("data", {})))

    def _show(self, ids: Any) -> None:
        stack = list(ids)
        while stack:
            cid = stack.pop()
            if cid in self.ids:
                continue
            if cid not in self.widgets:
                self._awaited.add(cid)
                continue
            self.ids.add(cid)
            stack.extend(references(self.widgets[cid]))
