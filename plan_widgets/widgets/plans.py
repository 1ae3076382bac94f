"""``%claude plans`` in a page: the project's kept plans as a list, an **Open** button on each
row; the plan opened shows below the list as a read-only card, with **Changes against** any
other kept plan (the plan card's own diff). Nothing here decides anything.

The list is one grid (a button and one safe-HTML row per plan: the default list is 20 plans,
41 widget models); the card is made on the first Open and reused. A saved notebook without
widget state shows the list as a table (the bundle's ``text/html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from ..render.look import RULE
from ..render.markdown import escape
from ..render.plans import card_html, changes_html, label, row
from ..render.table import table_html
from .markdown import html_output, set_html
from .shared import look, on_change, on_click

_GRID = "auto minmax(0, 1fr)"


def _row_html(k: Any) -> str:
    """A row of the list (safe HTML: its title is the model's)."""
    pid, status, session, proposed, title = (escape(c) for c in row(k))
    return f"<code>{pid}</code> · <b>{status}</b> · {session} · {proposed} · {title}"


class PlanCard:
    """One kept plan, read-only: its head (:func:`~plan_widgets.render.plans.card_html`) and a
    **Changes against** choice of every other kept plan (the plan it revises and its revisions
    first)."""

    def __init__(self, every: Sequence[Any]) -> None:
        self.every = {k.id: k for k in every}
        self.plan: Any = None
        self.head = html_output("")
        self.against = w.Dropdown(description="Changes against", options=[("(none)", "")],
                                  value="", style={"description_width": "initial"},
                                  layout=w.Layout(width="100%", max_width="48em"))
        on_change(self.against, lambda _c: self._show_changes())
        self.changes = html_output("")
        self.box = w.VBox([self.head, self.against, self.changes],
                          layout=w.Layout(border=f"1px solid {RULE}",
                                          padding="0.5em 0.8em", margin="0.6em 0 0 0"))
        self.box.add_class("pw-kept-plan")

    def open(self, plan: Any, against: Any = None) -> None:
        """Show ``plan``, with its Changes against ``against`` (default: the plan it revises,
        as a revised plan's live card opens on its Changes)."""
        against = against if against is not None else self.every.get(plan.revises or "")
        self.plan = plan
        set_html(self.head, card_html(plan))
        near = [k for k in self.every.values() if k.id in (plan.revises, *(
            o.id for o in self.every.values() if o.revises == plan.id))]
        others = near + [k for k in self.every.values() if k.id != plan.id and k not in near]
        self.against.options = [("(none)", ""), *((label(k), k.id) for k in others)]
        self.against.value = against.id if against is not None else ""
        self._show_changes()

    def _show_changes(self) -> None:
        other = self.every.get(self.against.value) if self.plan is not None else None
        set_html(self.changes, changes_html(self.plan, other) if other is not None else "")


class PlanList:
    """The kept plans ``shown``, each with an Open button; ``every`` kept plan is a choice of
    the opened card's Changes against."""

    def __init__(self, shown: Sequence[Any], every: Sequence[Any], caption: str) -> None:
        self.card = PlanCard(every)
        cells: list[w.Widget] = []
        for k in shown:
            b = w.Button(description="Open", icon="folder-open", tooltip=f"Open plan {k.id}",
                         **look("auto", "button"))
            b.add_class("pw-open-plan")
            on_click(b, lambda _b, k=k: self.open(k))
            cells += [b, html_output(_row_html(k))]
        self.grid = w.GridBox(cells, layout=w.Layout(grid_template_columns=_GRID,
                                                     grid_gap="0.2em 0.6em",
                                                     align_items="center"))
        self.caption = html_output(f"<small>{escape(caption)}</small>")
        self.box = w.VBox([self.caption, self.grid])
        self.box.add_class("pw-plan-list")

    def open(self, plan: Any, against: Any = None) -> None:
        """Show ``plan`` on the card below the list (with Changes against ``against``)."""
        self.card.open(plan, against)
        if self.card.box not in self.box.children:
            self.box.children = (*self.box.children, self.card.box)


def fallback_html(shown: Sequence[Any], caption: str) -> str:
    """The list as an escaped table, for a page without the widgets."""
    return table_html(["id", "status", "session", "proposed", "plan"],
                      [row(k) for k in shown], cls="pw-table", caption=caption)
