"""Widgets: the control bar, the decision cards, one turn's streaming view (a resumed
session's read-only history is static HTML: :func:`plan_widgets.render.history.history_html`)."""

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
