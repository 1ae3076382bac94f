"""Widgets: the control bar, the decision cards, one turn's streaming view, and a session's
read-only history."""

from .cards import Card, PlanCard, QuestionCard, ToolCard, card_for, card_html, show_card
from .control import ControlBar
from .history import history_widget
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
    "history_widget",
    "markdown_output",
    "show_card",
]
