"""One turn's output in a cell: streamed Markdown, tool lines, cards, markers, a footer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..agent.decisions import Decision
from ..render.code import highlight_python
from ..render.markdown import escape, render_html, summarize
from .cards import card_for, decision_markdown
from .control import ControlBar
from .markdown import StreamingMarkdown, html_output, set_html

if TYPE_CHECKING:
    from ..agent.session import Session

PLAIN_LIMIT = 20_000  # characters of the plain-text fallback
_TOOL_ICON = {"Bash": "$", "Write": "✎", "Edit": "✎", "Read": "📄", "Glob": "🔎", "Grep": "🔎"}


def _tool_html(name: str, tool_input: dict[str, Any], result: Any = None,
               is_error: bool = False, done: bool = False) -> str:
    code = tool_input.get("code") if name.startswith("mcp__") else None
    head = summarize(tool_input.get("command") or tool_input.get("file_path")
                     or tool_input.get("pattern") or tool_input.get("title") or code
                     or tool_input.get("name") or tool_input, 100)
    icon = _TOOL_ICON.get(name, "⚙")
    state = "" if done else " …"
    if done and is_error:
        state = " ✗"
    if isinstance(code, str):  # the kernel's code tools: the code itself, highlighted
        shown = highlight_python(code)
    else:
        body = json.dumps(tool_input, indent=1, ensure_ascii=False, default=str)
        if len(body) > 4000:
            body = body[:4000] + "\n…"
        shown = f"<pre>{escape(body)}</pre>"
    # a proposed cell stays open: its code is there to copy
    opened = " open" if isinstance(code, str) and name.endswith("__propose_cell") else ""
    parts = [
        f"<details class=\"pw-tool\"{opened}>",
        f"<summary><code>{escape(icon)} {escape(name)}</code> {escape(head)}{escape(state)}"
        "</summary>",
        shown,
    ]
    if done:
        text = _result_text(result)
        if len(text) > 4000:
            text = text[:4000] + "\n…"
        parts.append(f"<pre>{escape(text)}</pre>")
    parts.append("</details>")
    # newlines inside <pre> must not make blank lines (that would end the HTML block)
    return "".join(p.replace("\n", "&#10;") for p in parts)


def _result_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                out.append(str(item.get("text", "")))
            else:
                out.append(json.dumps(item, default=str)[:500])
        return "\n".join(out)
    return str(content)


class WidgetTurnView(w.VBox):
    """The widget view of one turn (implements the session's ``TurnView``)."""

    def __init__(self, session: Session, prompt: str, control: ControlBar) -> None:
        self.session = session
        self.prompt = prompt
        self.body = w.VBox(layout=w.Layout(gap="2px"))
        self.footer = w.HTML()
        self._stream: StreamingMarkdown | None = None
        self._tools: dict[str, tuple[w.Output, str, dict[str, Any]]] = {}
        self._transcript: list[str] = []
        self._transcript_html: dict[int, str] = {}  # streamed parts, already rendered
        self.cards: list[w.Widget] = []
        super().__init__([control, self.body, self.footer])
        self.add_class("pw-turn")

    # -- the TurnView protocol -----------------------------------------------------------------
    def text(self, delta: str) -> None:
        if self._stream is None:
            box = w.VBox()
            self._add(box)
            self._stream = StreamingMarkdown(box)
        self._stream.append(delta)

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream.flush()
            self._transcript_html[len(self._transcript)] = self._stream.html()
            self._transcript.append(self._stream.text)
            self._stream = None

    def _add(self, widget: w.Widget) -> None:
        self.body.children = (*self.body.children, widget)

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self._close_stream()
        out = html_output(_tool_html(name, tool_input))
        self._tools[tool_use_id] = (out, name, tool_input)
        self._add(out)
        self._transcript.append(f"`{name}` {summarize(tool_input, 100)}")

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        entry = self._tools.get(tool_use_id)
        if entry is None:
            return
        out, name, tool_input = entry
        set_html(out, _tool_html(name, tool_input, content, is_error, done=True))

    def decision(self, decision: Decision) -> None:
        self._close_stream()
        card = card_for(decision)
        self.cards.append(card)
        self._add(card)
        i = len(self._transcript)
        self._transcript.append(decision_markdown(decision))

        def follow() -> None:  # the fallbacks say how it ended
            self._transcript[i] = decision_markdown(decision)

        decision.watch(follow)

    def marker(self, text: str) -> None:
        self._close_stream()
        self._add(w.HTML(f'<small style="color:#6b7280">— {escape(text)} —</small>'))
        self._transcript.append(f"*— {text} —*")

    def error(self, message: str) -> None:
        self._close_stream()
        self._add(w.HTML(f'<div style="color:#b91c1c"><b>{escape(message)}</b></div>'))
        self._transcript.append(f"**{message}**")

    def finished(self, summary: str, ok: bool) -> None:
        self._close_stream()
        mark = "✓" if ok else "✗"
        self.footer.value = f'<small style="color:#6b7280">{mark} {escape(summary)}</small>'
        self._transcript.append(f"*{mark} {summary}*")

    # -- static fallback -----------------------------------------------------------------------
    def fallback_markdown(self) -> str:
        """Safe Markdown of what happened so far, for frontends without widgets."""
        # Each part is rendered on its own, so streamed text (already rendered block by
        # block while it arrived) is not rendered a second time.
        head = f"**claude** ({self.session.name}): {self.prompt.strip()[:200]}"
        parts = [render_html(head)]
        parts.extend(self._transcript_html.get(i) or render_html(t)
                     for i, t in enumerate(self._transcript))
        if self._stream is not None:
            parts.append(self._stream.html())
        return "\n".join(parts)

    def fallback_text(self) -> str:
        """Plain text of what happened so far."""
        parts = [f"claude ({self.session.name}): {self.prompt.strip()[:200]}", *self._transcript]
        if self._stream is not None:
            parts.append(self._stream.text)
        text = "\n\n".join(parts)
        if len(text) > PLAIN_LIMIT:  # the Markdown fallback has it all; no second full copy
            text = (f"{text[:PLAIN_LIMIT]}\n… ({len(text) - PLAIN_LIMIT:,} more characters in "
                    "the rendered view)")
        return text

    def mimebundle(self) -> dict[str, Any]:
        """The display bundle: the widget view, with Markdown and text fallbacks."""
        return {
            "application/vnd.jupyter.widget-view+json": {
                "version_major": 2, "version_minor": 0, "model_id": self.model_id,
            },
            "text/markdown": self.fallback_markdown(),
            "text/plain": self.fallback_text(),
        }
