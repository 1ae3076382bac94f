"""Subagents under their ``Agent`` line, thinking as a folded line, refusals in words.

Measured (docs/cli.md#agents, CLI 2.1.332): a subagent's messages carry the ``Agent`` call's id as
their parent (``parent_tool_use_id``), its permission requests carry its task id, and the
CLI's task messages (started, progress about once per tool, ended with a summary) tell its
state. Before issue 21 a background subagent's text was glued into the main reply and its
tool lines stood beside the Agent line. Here each ``Agent`` call is one part of the turn: a
foldable ``<details>`` whose summary line is the agent's state (running in background · last
tool · N tools · tokens · elapsed, or ✓/✗ with its result summary), and whose body holds what
the subagent said and did, and its cards, labelled with its description.

Everything in it is untrusted (the description and summary are the model's words, the
subagent's text is model output): it goes through :func:`render_html` or :func:`escape`.
The subagent's text arrives as whole blocks (not deltas), so each is rendered once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as w

from ..render.agents import agent_report, agent_said, agent_state, count, error_state
from ..render.look import AGENT_RULE, MUTED
from ..render.markdown import escape, html_block, render_html, summarize
from .kinds import card_for, card_html
from .markdown import html_output, set_html
from .shared import shared, soon

if TYPE_CHECKING:
    from ..agent.decisions import Decision


class WidgetTurnView(Protocol):
    """What Agent lines need of their turn view (:class:`.turn.WidgetTurnView`; a protocol,
    so this module does not import the view that imports it)."""

    _parts_html: dict[int, str]
    _transcript: list[str]
    _turn_done: bool
    cards: list[Any]
    static: bool

    def _part(self, text: str, safe_html: str | None = None, widget: Any = None) -> int: ...
    def _settle(self) -> None: ...
    def _update_static(self) -> None: ...

PART_LIMIT = 60
"""Nested parts an Agent line keeps (the oldest go, said in one line): each update of the
line re-sends its whole block (a tool line is at most about 8 KB: its input and result are
cut at 4,000 characters each), so a long-running agent's block stays bounded."""
RESULT_LIMIT = 20_000
_BODY_STYLE = f"border-left:2px solid {AGENT_RULE};padding-left:8px;margin:2px 0 4px 4px"
ToolHtml = Callable[..., str]


class AgentBlock:
    """One ``Agent`` call: its line, and what its subagent did under it."""

    def __init__(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self.id = tool_use_id
        self.name = name
        self.input = tool_input
        self.record: Any = None  # the session's AgentRecord, once the CLI reported it
        self.result: Any = None
        self.result_html = ""  # a foreground agent's answer, rendered once
        self.is_error = False
        self.done = False  # the Agent call returned (a background agent goes on after it)
        # ("text", (text, its html)) | ("tool", tool use id) | ("card", decision)
        self.parts: list[tuple[str, Any]] = []
        self.tools: dict[str, list[Any]] = {}  # id -> [name, input, result, is_error, done]
        self.dropped = 0
        self.index = -1  # its part in the turn view
        self.out: w.Output | None = None
        self.box: w.VBox | None = None

    @property
    def description(self) -> str:
        rec = self.record
        return str((rec.description if rec is not None else "") or self.input.get("description")
                   or self.input.get("subagent_type") or "subagent")

    def add(self, kind: str, value: Any) -> None:
        self.parts.append((kind, value))
        if len(self.parts) > PART_LIMIT:  # the oldest part that is not a card goes
            at = next((i for i, (k, _v) in enumerate(self.parts) if k != "card"), None)
            if at is not None:
                kind0, value0 = self.parts.pop(at)
                if kind0 == "tool":
                    self.tools.pop(value0, None)
                self.dropped += 1

    def summary(self) -> tuple[str, str]:
        """The Agent line (plain text): its mark (✓, ✗ or none), and the description with
        the agent's state after the tool's name."""
        rec = self.record
        head = f'"{summarize(self.description, 80)}"'
        if self.done and self.is_error:
            return "", head + error_state(self.result)
        state = agent_state(rec)
        if rec is not None and not rec.running:
            mark = "✓ " if rec.status == "completed" else "✗ "
            said = f" — {summarize(agent_said(rec), 160)}" if agent_said(rec) else ""
            return mark, head + (f" · {state}" if state else "") + said
        if rec is None and self.done:
            return "✓ ", head
        return "", head + (f" · {state}" if state else " …")

    def text(self) -> str:
        """Plain text of the block (the turn's text fallback)."""
        mark, rest = self.summary()
        lines = [f"{mark}`{self.name}` {rest}"]
        for kind, value in self.parts:
            if kind == "tool":
                name, tool_input = self.tools[value][:2]
                lines.append(f"    `{name}` {summarize(tool_input, 100)}")
            elif kind == "text":
                lines.append("    " + summarize(value[0], 200))
        return "\n".join(lines)

    def html(self, tool_html: ToolHtml, *, static: bool) -> str:
        """The block as safe HTML: the line, then (folded) what the subagent did; ``static``:
        with its cards (live, they are widgets below the line)."""
        cards = any(kind == "card" for kind, _ in self.parts)
        mark, rest = self.summary()
        opened = " open" if static and cards else ""
        body = []
        if self.dropped:
            body.append(f"<small>… {self.dropped} earlier parts not shown</small>")
        for kind, value in self.parts:
            if kind == "text":
                body.append(value[1])
            elif kind == "tool":
                name, tool_input, result, is_error, done = self.tools[value]
                body.append(tool_html(name, tool_input, result, is_error, done))
            elif kind == "card" and static:
                body.append(card_html(value))
        if self.result_html:
            body.append(f"<details><summary>result</summary>{self.result_html}</details>")
        prompt = str(self.input.get("prompt") or "")
        if prompt:
            body.insert(0, "<details><summary>prompt</summary>"
                        f"<pre>{escape(prompt[:4000])}</pre></details>")
        return "".join([
            f'<details class="pw-tool pw-agent"{opened}>',
            f"<summary>{escape(mark)}<code>↳ {escape(self.name)}</code> {escape(rest)}"
            "</summary>",
            f'<div class="pw-agent-body" style="{_BODY_STYLE}">', *body, "</div></details>",
        ])


def _plain(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) if isinstance(c, dict) else str(c)
                         for c in content)
    return str(content or "")


class Nested:
    """A turn view's Agent lines (each an :class:`AgentBlock`) and thinking lines."""

    def __init__(self, view: WidgetTurnView, tool_html: ToolHtml) -> None:
        self.view = view
        self.tool_html = tool_html
        self.blocks: dict[str, AgentBlock] = {}  # by the Agent call's tool use id
        self._by_agent: dict[str, str] = {}  # the CLI's task id -> Agent call id
        self._by_tool: dict[str, str] = {}  # a subagent's tool call id -> Agent call id
        self.decisions: list[Decision] = []  # cards under an Agent line

    def open(self) -> bool:
        """Whether a card under an Agent line still waits (the view stays live)."""
        return any(not d.done for d in self.decisions)

    # -- the Agent line ------------------------------------------------------------------------
    def started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self._block(tool_use_id, name, tool_input)

    def _block(self, tool_use_id: str, name: str = "Agent",
               tool_input: dict[str, Any] | None = None) -> AgentBlock:
        block = self.blocks.get(tool_use_id)
        if block is not None:
            return block
        v = self.view
        block = self.blocks[tool_use_id] = AgentBlock(tool_use_id, name, tool_input or {})
        live = not v.static
        if live:
            block.out = html_output(block.html(self.tool_html, static=False),
                                    layout=shared("layout"))
            block.box = w.VBox([block.out], layout=shared("layout"), _dom_classes=("pw-agent",))
        block.index = v._part(block.text(), self._static_html(block), block.box)
        return block

    def finished(self, tool_use_id: str, content: Any, is_error: bool) -> bool:
        """The Agent call returned (False: not an Agent line of this view)."""
        block = self.blocks.get(tool_use_id)
        if block is None:
            return False
        block.result, block.is_error, block.done = content, is_error, True
        text = agent_report(_plain(content))  # without the CLI's framing for the model
        if text.strip() and not is_error:
            cut = text[:RESULT_LIMIT] + ("\n\n…" if len(text) > RESULT_LIMIT else "")
            block.result_html = render_html(cut)
        self.refresh(block)
        return True

    def updated(self, tool_use_id: str, record: Any) -> None:
        block = self._block(tool_use_id, "Agent", {"description": record.description})
        block.record = record
        self._by_agent[record.id] = tool_use_id
        self.refresh(block)

    # -- what the subagent does ----------------------------------------------------------------
    def text(self, parent: str, text: str) -> None:
        if not text.strip():
            return
        block = self._block(parent)
        block.add("text", (text, render_html(text)))  # rendered once
        self.refresh(block)

    def tool_started(self, parent: str, tool_use_id: str, name: str,
                     tool_input: dict[str, Any]) -> None:
        block = self._block(parent)
        block.tools[tool_use_id] = [name, tool_input, None, False, False]
        self._by_tool[tool_use_id] = parent
        block.add("tool", tool_use_id)
        self.refresh(block)

    def tool_finished(self, parent: str, tool_use_id: str, content: Any,
                      is_error: bool) -> None:
        block = self._block(parent)
        entry = block.tools.get(tool_use_id)
        if entry is None:
            return
        entry[2:] = [content, is_error, True]
        self.refresh(block)

    def decision(self, d: Decision) -> bool:
        """A subagent's card goes under its Agent line (False: no such line here)."""
        parent = self._by_agent.get(getattr(d, "agent_id", None) or "") or self._by_tool.get(
            d.tool_use_id or "")
        block = self.blocks.get(parent or "")
        if block is None:
            return False
        v = self.view
        block.add("card", d)
        self.decisions.append(d)
        if not v.static and block.box is not None:
            card = card_for(d)
            v.cards.append(card)
            block.box.children = (*block.box.children, card)
        self.refresh(block)

        def follow() -> None:
            self.refresh(block)
            if not v.static and v._turn_done and d.done:
                soon(v._settle)

        d.watch(follow)
        return True

    def refresh(self, block: AgentBlock) -> None:
        v = self.view
        if block.index < 0:
            return
        v._transcript[block.index] = block.text()
        v._parts_html[block.index] = self._static_html(block)
        if v.static:
            v._update_static()
        elif block.out is not None:
            set_html(block.out, block.html(self.tool_html, static=False))

    def _static_html(self, block: AgentBlock) -> str:
        return html_block(block.html(self.tool_html, static=True), "pw-html")

    # -- thinking ------------------------------------------------------------------------------
    def thinking(self, text: str) -> None:
        """A whole thinking block: one folded line, never mixed into the answer."""
        if not text.strip():
            return
        label = f"Thinking… {count(len(text), 'chars')}"
        safe = (f'<details class="pw-thinking"><summary><small style="color:{MUTED}">'
                f"{escape(label)}</small></summary>{render_html(text)}</details>")
        v = self.view
        out = None if v.static else html_output(safe, layout=shared("layout"))
        v._part(f"*{label}*", html_block(safe, "pw-html"), out)
