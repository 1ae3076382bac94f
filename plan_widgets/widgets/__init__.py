"""Widgets: the control bar, the decision cards (one module per kind: :mod:`.kinds`), one
turn's streaming view (a resumed session's read-only history is static HTML:
:func:`plan_widgets.render.history.history_html`)."""

from .control import ControlBar
from .kinds import Card, PlanCard, QuestionCard, ToolCard, card_for, card_html, show_card
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
