"""Kernel code: a permission for one of the kernel's own code tools (``mcp__…`` with a
``code`` input: run code in the kernel, propose a cell).

A tool permission in every way but what it shows: the code itself, highlighted, instead of
the input's JSON. Its card is a :class:`~.tool.ToolCard` (the same buttons, the same widget
models, the tool card's colour and class); its terminal form is the tool's.
"""

from __future__ import annotations

from typing import Any

from ...agent.decisions import Decision, ToolDecision
from ...render.code import highlight_python
from . import tool
from .frame import Kind, static_card


def is_code(d: Decision) -> bool:
    """A kernel code tool's permission: an MCP tool whose input has its code."""
    return (isinstance(d, ToolDecision) and d.tool.startswith("mcp__")
            and isinstance(d.input.get("code"), str))


def preview(_tool: str, tool_input: dict[str, Any]) -> str:
    """The code, highlighted (safe HTML)."""
    return highlight_python(tool_input["code"])


def card(d: ToolDecision) -> tool.ToolCard:
    return tool.ToolCard(d, preview)


def static_html(d: ToolDecision) -> str:
    return static_card(d, tool.head(d, preview))


KIND = Kind[ToolDecision](
    name="code", color=None, matches=is_code, card=card, static_html=static_html,
    markdown=tool.markdown, show_text=tool.show_text, ask_text=tool.ask_text)
