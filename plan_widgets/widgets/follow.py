"""What happens between cells, shown below the newest ``%%claude`` cell's turn.

Measured (docs/cli.md#agents, CLI 2.1.332): when a background agent ends while no cell runs, the
CLI starts a turn by itself, and a background agent may ask for a permission after its cell
returned. Neither has a cell of its own. Output displayed while no cell executes goes to
whichever request the kernel handled last (any cell, or none), but a display's contents can
be replaced at any time by its id (``update_display_data``), also in a finished cell. So
such a turn is shown in the display of the session's newest ``%%claude`` cell, below that
cell's turn: a :class:`CellStack` makes that one display show the turn and every view that
follows it.

While one of them is live, the display is one container widget holding the live views, and
an ``Output`` with the static rendering for each view that is static already. Once all are
static the display becomes their static Markdown, one after the other, and the container and
its ``Output``s close: nothing is left that needs a widget manager (a saved notebook shows it
all), and no widget model is left open.

One rule of the page (measured in JupyterLab 4.6 and Notebook 7.6, issue 31): when a display
that shows widget A is updated in place to show widget B, the frontend renders B in the same
output renderer, which still listens to A's view; closing A then hides the renderer, so the
whole cell showed only its control bar. A stack that takes over the display of a live turn
(start fresh, a card while the turn runs) therefore keeps that turn's widgets open, static or
not, until the display has left widgets (its static Markdown), and closes them then.
"""

from __future__ import annotations

from typing import Any, Protocol

import ipywidgets as w

from ..render.look import MUTED, RULE
from ..render.markdown import escape, html_block
from .shared import (
    close_tree,
    keep_record,
    loaded_elsewhere,
    look,
    set_record,
    shared,
    update_display,
    widget_bundle,
)


class WidgetTurnView(Protocol):
    """What a stack needs of a turn view (:class:`.turn.WidgetTurnView`; a protocol, so this
    module does not import the view that imports it)."""

    _handle: Any
    _stack: Any
    children: Any
    static: bool

    def static_bundle(self) -> dict[str, Any]: ...
    def fallback_markdown(self) -> str: ...
    def fallback_text(self) -> str: ...


class _Member:
    """A view's display handle inside a stack: any update re-renders the cell's display."""

    def __init__(self, stack: CellStack) -> None:
        self.stack = stack

    def update(self, bundle: dict[str, Any], raw: bool = False) -> None:
        self.stack.render()


class CellStack:
    """A cell's turn view and the views that follow it, in the cell's one display."""

    def __init__(self, root: WidgetTurnView) -> None:
        self.root = root
        self.handle = root._handle  # the cell's display
        self.members: list[WidgetTurnView] = [root]
        self.box: w.VBox | None = None
        self._copies: dict[int, w.Output] = {}  # a static member's rendering, while live
        # the display showed the live root itself: this stack closes it (see the module's doc)
        self._took_over = self.handle is not None and not root.static
        self._held = False  # the root went static and waits here to be closed
        # A page may show this display from its file (shared.loaded_elsewhere, issue 36): no
        # update of the display reaches it, so the views go inside the root widget that it
        # shows, and the root keeps the static record at the end (shared.keep_record).
        self._inside = (self.handle is not None and loaded_elsewhere(self.handle)
                        and getattr(root, "comm", None) is not None)
        self._kept: w.Output | None = None
        root._stack = self
        if self.handle is not None:
            root._handle = _Member(self)

    @classmethod
    def of(cls, root: WidgetTurnView) -> CellStack:
        """``root``'s stack (made on first use)."""
        stack = root._stack
        return stack if isinstance(stack, CellStack) else cls(root)

    def add(self, view: WidgetTurnView, title: str) -> None:
        """Show ``view`` below the others, headed by ``title`` while it is live (its static
        rendering names it in its first line)."""
        view._stack = self
        if self.handle is not None:
            view._handle = _Member(self)
        head = (f'<div class="pw-follow-title" style="color:{MUTED};font-size:0.9em;'
                f'border-top:1px dashed {RULE};padding-top:2px;margin-top:0.6em">'
                f'{escape(title)}</div>')  # apart from the turn's closing line above it
        view.children = (w.HTML(html_block(head, "pw-html"), **look("layout", "html")),)
        self.members.append(view)
        self.render()

    def holds_open(self, view: WidgetTurnView) -> bool:
        """Whether ``view``, gone static, must stay open for now: it is the root whose display
        this stack took over, and the display still shows widgets. The stack closes it once
        the display is static (:meth:`render`)."""
        if view is self.root and (self._inside or self._took_over and self.box is not None):
            self._held = True
        return view is self.root and self._held

    # -- the display -------------------------------------------------------------------------
    def static_bundle(self) -> dict[str, Any]:
        """Every member's static rendering, in order (also the live display's fallback)."""
        return {"text/markdown": "\n".join(m.fallback_markdown() for m in self.members),
                "text/plain": "\n\n".join(m.fallback_text() for m in self.members)}

    def bundle(self) -> dict[str, Any]:
        """The display bundle: the container while a member is live, else static Markdown."""
        if all(m.static for m in self.members):
            return self.static_bundle()
        if self._inside:
            return {**widget_bundle(self.root), **self.static_bundle()}
        kids = [m if not m.static else self._copy(m) for m in self.members]
        if self.box is None:
            self.box = w.VBox(kids, layout=shared("layout"), _dom_classes=("pw-cell-stack",))
        elif tuple(kids) != self.box.children:
            self.box.children = tuple(kids)
        return {**widget_bundle(self.box), **self.static_bundle()}

    def render(self) -> None:
        """Show the stack as it is now; once every member is static, close the container."""
        bundle = self.bundle()
        if self.handle is not None:
            update_display(self.handle, bundle, "cell")
        if self._inside:
            self._render_inside(bundle)
            return
        if self.box is not None and all(m.static for m in self.members):
            held = [self.root] if self._held else []
            if loaded_elsewhere(self.handle):  # a page may show either from its file
                for kept in (self.box, *held):  # (shared.py, issue 36)
                    keep_record(kept, bundle)
            else:
                close_tree([self.box, *held], keep=[m for m in self.members if not m.static])
            self.box = None
            self._copies.clear()
            self._took_over = self._held = False

    def _render_inside(self, bundle: dict[str, Any]) -> None:
        """The root shows its own parts and then each view (live, or its static copy); once
        all are static, the root holds their static record."""
        root = self.root
        if self._kept is not None:
            set_record(self._kept, bundle)
        elif all(m.static for m in self.members):
            self._kept = keep_record(root, bundle)  # (closes the views and copies in it)
            self._copies.clear()
        else:
            ours = {id(m) for m in self.members[1:]} | {id(c) for c in self._copies.values()}
            own = [c for c in root.children if id(c) not in ours]
            kids = [m if not m.static else self._copy(m) for m in self.members[1:]]
            if tuple(own + kids) != tuple(root.children):
                root.children = (*own, *kids)

    def _copy(self, view: WidgetTurnView) -> w.Output:
        out = self._copies.get(id(view))
        data = {"output_type": "display_data", "data": view.static_bundle(), "metadata": {}}
        if out is None:
            out = self._copies[id(view)] = w.Output(layout=shared("layout"), outputs=(data,))
        elif out.outputs != (data,):
            out.outputs = (data,)
        return out
