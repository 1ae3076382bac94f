"""The tool permission decision: its card, its static forms, its terminal form.

Asked in modes that ask (``default``, and ``acceptEdits`` for what is not an edit): the card
shows the command or the input, with Allow, Always allow (the CLI's own suggested
rule, shown on the card, offered only when there is one) and Deny with an optional reason.
The kernel's code tools are a kind of their own (:mod:`.code`) that shows its code instead,
and so are file edits (:mod:`.edit`), which show the change against the file on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ...agent.decisions import ToolDecision
from ...render import prompts
from ...render.decision import suggestion_text, title_html, wrapping
from ...render.look import BORDER
from ...render.markdown import SMALL_STYLE, escape, summarize
from ..markdown import html_output, set_html
from ..shared import look, on_click, shared, typed_line
from .frame import Card, Kind, Terminal, markdown_card, static_card

Preview = Callable[[str, dict[str, Any]], str]
"""A tool call's input as safe HTML, from the tool's name and input."""


def preview(tool: str, tool_input: dict[str, Any]) -> str:
    """A compact, escaped HTML view of a tool call's input."""
    if tool == "Bash":
        cmd = str(tool_input.get("command", ""))
        return f"<pre>$ {escape(cmd)}</pre>"
    body = json.dumps(tool_input, indent=1, ensure_ascii=False, default=str)
    if len(body) > 2000:
        body = body[:2000] + "\n…"
    return f"<pre>{escape(body)}</pre>"


def head(d: ToolDecision, shown: Preview = preview) -> str:
    """The card's head (safe HTML): its title, the input as ``shown`` draws it, and what
    Always allow would also allow."""
    parts = [title_html(d.title or f"Allow {d.tool}?"), shown(d.tool, d.input)]
    o = d.outcome
    if d.suggestions and (o is None or o.status == "always"):  # what it would do, or did
        always = "; ".join(suggestion_text(x) for x in d.suggestions)
        said = "Always allow also applies" if o is None else "Always allow also applied"
        parts.append(f'<div style="{SMALL_STYLE}">{said}: {escape(always)}</div>')
    return wrapping("".join(parts))


class ToolCard(Card):
    """A tool permission: Allow, Always allow (when the CLI suggests rules), Deny (+reason)."""

    decision: ToolDecision

    def __init__(self, decision: ToolDecision, shown: Preview = preview) -> None:
        self.shown = shown
        top = html_output(head(decision, shown), layout=shared("full"))
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check",
                                     **look("auto", "button-success"))
        on_click(self.allow_button, lambda _b: decision.allow(by="user"))
        self.always_button: w.Button | None = None
        if decision.suggestions:
            always = "; ".join(suggestion_text(x) for x in decision.suggestions)
            self.always_button = w.Button(description="Always allow", button_style="info",
                                          icon="check-double", tooltip=f"Also: {always}"[:300],
                                          **look("auto", "button-info"))
            on_click(self.always_button, lambda _b: decision.allow(always=True, by="user"))
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times",
                                    **look("auto", "button-danger"))
        self.reason = typed_line(placeholder="Reason (optional)")
        on_click(self.deny_button, lambda _b: decision.deny(self.reason.value, by="user"))
        buttons = [self.allow_button, self.always_button, self.deny_button]
        super().__init__(decision, [top, *[b for b in buttons if b], self.reason])
        if decision.suggestions:  # decided: the head no longer offers what was not chosen
            decision.watch(lambda: set_html(top, head(decision, shown)))

    def static_html(self) -> str:
        return static_card(self.decision, head(self.decision, self.shown))

    def markdown(self) -> str:
        return markdown(self.decision)


def static_html(d: ToolDecision) -> str:
    return static_card(d, head(d))


def markdown(d: ToolDecision) -> str:
    return markdown_card(d, [f"**Permission asked**: `{d.tool}` {summarize(d.input, 200)}"])


# -- the terminal form -----------------------------------------------------------------------

def show_text(d: ToolDecision, out: Terminal) -> None:
    out.line("")
    out.line(f"Allow {d.tool} {summarize(d.input, 160)}?", style="bold")
    show_always(d, out)


def show_always(d: ToolDecision, out: Terminal) -> None:
    """What Always allow would also allow (the CLI's suggested rules), if it offers one."""
    if d.suggestions:
        rules = "; ".join(suggestion_text(x) for x in d.suggestions)  # the card's words
        out.line(f"  always would: {summarize(rules, 160)}", style="dim")


async def ask_text(d: ToolDecision, io: Terminal) -> None:
    always = bool(d.suggestions)
    c = await io.pick(prompts.tool_prompt(always), prompts.tool_choices(always))
    if c is prompts.TOOL_ALLOW:
        d.allow(by="user")
    elif c is prompts.TOOL_ALWAYS:
        d.allow(always=True, by="user")
    else:
        d.deny(await io.ask("reason (optional): "), by="user")


KIND = Kind[ToolDecision](
    name="tool", color=BORDER["tool"], matches=lambda d: isinstance(d, ToolDecision), card=ToolCard,
    static_html=static_html, markdown=markdown, show_text=show_text, ask_text=ask_text)
