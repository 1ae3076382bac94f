"""File edits: a permission for Write, Edit, MultiEdit or NotebookEdit (issue 43).

A tool permission in every way but what it shows: the change against the file as the gate
read it when the card opened (a diff with line numbers and context, changed words marked; a
new file as new; a notebook cell as a cell), instead of the input's strings. Its card is a
:class:`~.tool.ToolCard` (the same buttons, widget models, colour and class); the static card,
the Markdown fallback and the terminal form show the same change, so a saved notebook and a
terminal session keep what was allowed.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from ...agent.decisions import Decision, ToolDecision
from ...agent.gate import EDIT_TOOLS
from ...render.change import Change, change_html, change_lines, change_markdown, change_of
from ...render.paths import home_short
from . import tool
from .frame import Kind, Terminal, markdown_card, static_card

_changes: WeakKeyDictionary[ToolDecision, Change] = WeakKeyDictionary()
"""Each decision's change, described once (the card, its refreshes and its static copies
draw the same one; the snapshot it is made from does not change)."""


def is_edit(d: Decision) -> bool:
    return isinstance(d, ToolDecision) and d.tool in EDIT_TOOLS


def change(d: ToolDecision) -> Change:
    c = _changes.get(d)
    if c is None:
        c = _changes[d] = change_of(d.tool, d.input, d.before) or Change("", d.tool, diff=False)
    return c


def shown(d: ToolDecision) -> tool.Preview:
    """The card's body for ``d``: its change (safe HTML)."""
    def draw(_tool: str, _input: dict[str, Any]) -> str:
        return change_html(change(d))
    return draw


def card(d: ToolDecision) -> tool.ToolCard:
    return tool.ToolCard(d, shown(d))


def static_html(d: ToolDecision) -> str:
    return static_card(d, tool.head(d, shown(d)))


def markdown(d: ToolDecision) -> str:
    return markdown_card(d, change_markdown(d.tool, change(d)))


def show_text(d: ToolDecision, out: Terminal) -> None:
    c = change(d)
    out.line("")
    out.line(f"Allow {d.tool} {home_short(c.path)}?", style="bold")
    for text, style in change_lines(c)[1:]:  # (its path is in the question)
        out.line(text, style=style)
    tool.show_always(d, out)


KIND = Kind[ToolDecision](
    name="edit", color=None, matches=is_edit, card=card, static_html=static_html,
    markdown=markdown, show_text=show_text, ask_text=tool.ask_text)
