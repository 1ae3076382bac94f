"""The decision kinds, one module each: a kind's live card, its static card (what a finished
turn leaves in the notebook) and its terminal form, from one description of the decision.

- :mod:`.plan`: a plan to approve (its editor, comments and Approve target in modules of
  their own: :mod:`.plan_edit`, :mod:`.plan_comments`, :mod:`.plan_targets`);
- :mod:`.question`: questions to answer;
- :mod:`.code`: the kernel's code tools, a tool permission that shows its code;
- :mod:`.edit`: file edits (Write, Edit, MultiEdit, NotebookEdit), a tool permission that
  shows the change against the file on disk;
- :mod:`.tool`: any other tool permission.

The frame every card shares is :mod:`.frame`. A new kind is one module with a
:class:`~.frame.Kind` in it, added to :data:`KINDS` here; the turn view, the static turn and
the terminal look it up with :func:`kind_of`.
"""

from __future__ import annotations

from typing import Any

from ...agent.decisions import Decision
from ..shared import card_color
from . import code, edit, plan, question, tool
from .frame import Card, Kind
from .plan import PlanCard
from .question import QuestionCard
from .tool import ToolCard

KINDS: dict[str, Kind[Any]] = {k.name: k for k in (plan.KIND, question.KIND, code.KIND,
                                                   edit.KIND, tool.KIND)}
"""Every kind by its name, in the order they are asked (a special case before its kind)."""
for _kind in KINDS.values():
    if _kind.color:
        card_color(_kind.name, _kind.color)


def kind_of(d: Decision) -> Kind[Any]:
    """The kind that shows ``d``: the first in :data:`KINDS` that takes it."""
    for kind in KINDS.values():
        if kind.matches(d):
            return kind
    raise LookupError(f"no decision kind shows {d!r}")


def card_for(d: Decision) -> Card:
    """The card that shows ``d``."""
    return kind_of(d).card(d)


def card_html(d: Decision) -> str:
    """``d``'s card as static, safe HTML (one raw HTML block): what was asked, its status."""
    return kind_of(d).static_html(d)


def decision_markdown(d: Decision) -> str:
    """``d`` as Markdown source, for frontends without widgets: what was asked and, once
    decided, how it ended."""
    return kind_of(d).markdown(d)


def show_card(d: Decision) -> Card:
    """Display ``d``'s card in the current cell, on a display of its own; once the decision
    is made, that display becomes the static card and the widgets close."""
    card = card_for(d)
    card.show()
    return card


__all__ = ["KINDS", "Card", "Kind", "PlanCard", "QuestionCard", "ToolCard", "card_for",
           "card_html", "decision_markdown", "kind_of", "show_card"]
