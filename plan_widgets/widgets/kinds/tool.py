"""The tool permission decision: its card, its static forms, its terminal form.

Asked in modes that ask (``default``, and ``acceptEdits`` for what is not an edit): the card
shows the command, the path or the diff, with Allow, a checkbox for each update the CLI
suggests with it (a rule, a folder, a mode: "also don't ask again for …", in plain words with
where it is kept and for how long; :mod:`plan_widgets.render.suggestions`), each taken on its
own, and Deny with an optional reason.
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
from ...render.decision import title_html, wrapping
from ...render.look import BORDER, OPTION_STYLE
from ...render.markdown import SMALL_STYLE, escape, inline_no_math, summarize
from ...render.suggestions import suggestion_text
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
    """The card's head (safe HTML): its title, the input as ``shown`` draws it, and, once
    allowed "always", what else was taken (the live card offers each with a checkbox)."""
    parts = [title_html(d.title or f"Allow {d.tool}?"), shown(d.tool, d.input)]
    taken = taken_text(d)
    if taken:
        parts.append(f'<div style="{SMALL_STYLE}">Also: {escape(taken)}</div>')
    return wrapping("".join(parts))


def taken_text(d: ToolDecision) -> str:
    """The suggested updates taken with an "always" allow, in words ("" when none)."""
    o = d.outcome
    if o is None or o.status != "always":
        return ""
    picked = range(len(d.suggestions)) if o.applied is None else o.applied
    return "; ".join(suggestion_text(d.suggestions[i]) for i in picked
                     if 0 <= i < len(d.suggestions))



def _also(text: str) -> w.Checkbox:
    """One suggested update's checkbox, its words wrapping inside the card (as a question's
    options do; a long command stuck out of an 800 px page's card)."""
    return w.Checkbox(value=False, indent=False, description_allow_html=True,
                      description=inline_no_math(text, OPTION_STYLE), tooltip=text,
                      **look("option", "checkbox"))

class ToolCard(Card):
    """A tool permission: Allow, with a checkbox per update the CLI suggests ("also: don't ask
    again for …, for this session only"; none ticked: this call only), Deny (+reason)."""

    decision: ToolDecision

    def __init__(self, decision: ToolDecision, shown: Preview = preview) -> None:
        self.shown = shown
        top = html_output(head(decision, shown), layout=shared("full"))
        self.also = [_also(f"Also {suggestion_text(x)}") for x in decision.suggestions]
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check",
                                     **look("auto", "button-success"))
        on_click(self.allow_button, lambda _b: self._allow())
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times",
                                    **look("auto", "button-danger"))
        self.reason = typed_line(placeholder="Reason (optional)")
        on_click(self.deny_button, lambda _b: decision.deny(self.reason.value, by="user"))
        super().__init__(decision, [top, *self.also, self.allow_button, self.deny_button,
                                    self.reason])
        if decision.suggestions:  # decided: the head says what else was taken
            decision.watch(lambda: set_html(top, head(decision, shown)))

    def _allow(self) -> None:
        picked = [i for i, box in enumerate(self.also) if box.value]
        self.decision.allow(only=picked or None, by="user")

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
    """What each of the CLI's suggested updates would also allow, in the card's words."""
    for x in d.suggestions:
        out.line(f"  [a]lso: {summarize(suggestion_text(x), 160)}", style="dim")


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
