"""Widgets: the control bar, the decision cards, and one turn's streaming view."""

from .cards import Card, PlanCard, QuestionCard, ToolCard, card_for
from .control import ControlBar
from .markdown import StreamingMarkdown, markdown_output
from .turn import WidgetTurnView

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
