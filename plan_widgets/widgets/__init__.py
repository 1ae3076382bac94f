"""Widgets: the control bar, the decision cards, and one turn's streaming view."""

from ._cards import Card, PlanCard, QuestionCard, ToolCard, card_for
from ._control import ControlBar
from ._markdown import StreamingMarkdown, markdown_output
from ._turn import WidgetTurnView

__all__ = [
    "Card",
    "ControlBar",
    "PlanCard",
    "QuestionCard",
    "StreamingMarkdown",
    "ToolCard",
    "WidgetTurnView",
    "card_for",
    "markdown_output",
]
