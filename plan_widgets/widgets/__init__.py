"""Widgets: the control bar, the decision cards, and one turn's streaming view."""

from .cards import Card, PlanCard, QuestionCard, ToolCard, card_for, card_html, show_card
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
    "card_html",
    "markdown_output",
    "show_card",
]
