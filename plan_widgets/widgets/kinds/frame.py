"""What every decision card shares: the live card's frame, the static card's frame, the
Markdown fallback's frame, and what a kind's terminal form is given to print and ask with.

A card's buttons call the decision's methods (``approve``, ``reject``, ``answer``, ``allow``,
``deny``) with ``by="user"``; once the decision is made by anyone, the card shows the outcome
and disables itself. Every model-written text on a card is rendered by the safe path.

A card is made of the widgets a user acts on (buttons, fields, choices) and as few others as
possible: what it shows (title, plan, tool input) is one rendered block, its status one line.
Each kind (a module of this package) gives its body; the frame around it (the asker's line,
the status line, the border) is drawn here from the decision's one description
(:class:`~plan_widgets.render.decision.Described`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import ipywidgets as w

from ...agent.decisions import Decision
from ...render.decision import Described, asker_html, state_text, status_html
from ...render.look import CARD_FRAME
from ...render.markdown import WRAP_STYLE, html_block
from ...render.prompts import Choice
from ..shared import (
    CARD_COLORS,
    close_tree,
    in_page_order,
    look,
    shared,
    shown_here,
    soon,
    update_display,
    widget_bundle,
)


class Terminal(Protocol):
    """What a kind's terminal form prints with and asks with (the text view gives it)."""

    def line(self, text: str, style: str | None = None) -> None: ...
    def panel(self, title: str, src: str, note: str | None = None) -> None: ...
    def safe(self, text: Any) -> str:
        """Model text made safe for the terminal: for a prompt (printed lines are made safe
        by the output itself)."""
        ...
    async def ask(self, prompt: str) -> str:
        """One line typed (raises ``EOFError`` once the decision ended without it)."""
        ...
    async def pick(self, prompt: str, choices: tuple[Choice, ...]) -> Choice:
        """One of ``choices``, asked again until the answer is one."""
        ...


D = TypeVar("D", bound=Decision)


@dataclass(frozen=True)
class Kind(Generic[D]):
    """One decision kind: which decisions it shows, and its three forms (registered in
    :mod:`plan_widgets.widgets.kinds`)."""

    name: str
    color: str | None
    """Its cards' colour; None for a kind shown as the kind it narrows (kernel code is a tool
    permission). A kind with a colour is named as its decisions' ``kind``."""
    matches: Callable[[Decision], bool]
    """Whether a decision is of this kind (the registry asks the kinds in order)."""
    card: Callable[[D], Card]
    """Its live card."""
    static_html: Callable[[D], str]
    """Its static card with its outcome: what a finished turn leaves in the notebook."""
    markdown: Callable[[D], str]
    """Its Markdown fallback (frontends without widgets, the turn's plain text)."""
    show_text: Callable[[D, Terminal], None]
    """Its terminal form: what it asks, printed."""
    ask_text: Callable[[D, Terminal], Awaitable[None]]
    """Asks it at the terminal prompt until it is decided."""


def static_card(d: Decision, head: str) -> str:
    """The card as static, safe HTML (one raw HTML block): ``head`` (what was asked, safe
    HTML), framed, with its status."""
    about = Described.of(d)
    frame = (f"border:2px solid {CARD_COLORS[about.kind]};{CARD_FRAME};"
             f"{WRAP_STYLE}")
    return html_block(
        f'<div class="pw-card pw-card-{about.kind} pw-static" style="{frame}">'
        f"{asker_html(about)}{head}"
        f'<div class="pw-card-status">{status_html(about)}</div></div>', "pw-html")


def markdown_card(d: Decision, lines: list[str]) -> str:
    """A decision as Markdown source, for frontends without widgets: ``lines`` (what was
    asked; untrusted parts go through the safe renderer like any text) and how it stands."""
    about = Described.of(d)
    if about.asker:
        lines = [f"*{about.asker}*", "", *lines]
    return "\n".join([*lines, "", f"*{state_text(about)}*"])


class Card(w.Box):
    """Common frame: the card's widgets, the shared invisible
    :class:`~plan_widgets.widgets.keep_place.KeepPlace` (the keyboard goes on where the person
    was after a click), then its status line (the last child).

    A kind's card says what its static forms are (:meth:`static_html`, :meth:`markdown`)."""

    def __init__(self, decision: Decision, controls: list[w.Widget]) -> None:
        self.decision = decision
        about = Described.of(decision)
        self.status = w.HTML(_status(status_html(about)), **look("full", "html"),
                             _dom_classes=("pw-card-status",))  # its text in its comm_open
        self.handle: Any = None  # a display of its own (show_card), else part of a turn's
        self._closed = False
        if about.asker:  # a subagent asks: the card names it first
            controls = [w.HTML(html_block(asker_html(about), "pw-html"),
                               **look("full", "html")), *controls]
        super().__init__(
            [*controls, shared("keep-place"), self.status], layout=shared(f"card-{decision.kind}"),
            _dom_classes=("pw-card", f"pw-card-{decision.kind}", "pw-keeps-place"),
        )
        in_page_order(controls)  # a picker's choice, then the click that reads it, in order
        # a change shows on the loop's next turn: a click's decision first wakes the gate,
        # which writes the answer to the CLI, then the card disables its ~10 controls
        # (measured: 4.6 ms of widget messages ahead of the Approve's answer; issue 46)
        decision.watch(lambda: soon(self.refresh))
        self.refresh()

    def static_html(self) -> str:
        """The card as static HTML with its outcome (the kind's :func:`static_card`)."""
        raise NotImplementedError

    def markdown(self) -> str:
        """The card as Markdown source (the kind's :func:`markdown_card`)."""
        raise NotImplementedError

    def _inputs(self) -> list[w.Widget]:
        return [c for c in self.children if c.has_trait("disabled")]

    def refresh(self) -> None:
        """Show the decision's state; disable every control once it is made."""
        if self._closed:  # static now; a late change (superseded) still reaches its display
            if self.handle is not None:
                self._show_static()
            return
        d = self.decision
        if d.outcome is not None:
            for c in self._inputs():
                c.disabled = True
        self.set_status(status_html(Described.of(d), live=True))
        if d.outcome is not None and self.handle is not None:
            soon(self.make_static)

    def set_status(self, safe_html: str) -> None:
        self.status.value = _status(safe_html)

    def mimebundle(self) -> dict[str, Any]:
        """The card's display bundle: the widget, and the static card for other frontends."""
        return widget_bundle(self, text_markdown=self.static_html(), text_plain=self.markdown())

    def show(self) -> None:
        """Display the card in the current cell, on a display of its own (see
        :func:`~plan_widgets.widgets.kinds.show_card`)."""
        self.handle = shown_here(self.mimebundle())
        if self.decision.done:
            self.make_static()

    def make_static(self) -> None:
        """Replace the card's own display with the static card, and close its widget models."""
        if self._closed:
            return
        self._show_static()
        self.close_models()

    def _show_static(self) -> None:
        update_display(self.handle, {"text/markdown": self.static_html(),
                                     "text/plain": self.markdown()}, f"{self.decision.kind} card")

    def close_models(self) -> None:
        """Close this card's widget models (its display must no longer show them)."""
        self._closed = True
        close_tree([self])

    def closed_with_turn(self) -> None:
        """Its turn closed the card's models with its own and shows the static card itself:
        from now on the card touches no widget."""
        self._closed = True


def lines_html(safe_html: str) -> str:
    """Text in an HTML widget, with a line height of its own: the widget's (28 px, to line up
    with buttons) made text that wraps look double-spaced."""
    return f'<div style="line-height:1.45">{safe_html}</div>'


def _status(safe_html: str) -> str:
    return html_block(lines_html(safe_html), "pw-status")
