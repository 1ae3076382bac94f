"""One turn's output in a cell: streamed Markdown, tool lines, cards, markers, a footer.

While the turn runs, the cell shows widgets (text streams in, cards wait for clicks). When it
has ended and no decision of it is still open, the cell's display is replaced by the turn's
static rendering (the same safe HTML as the fallback: text, tool lines with their details,
cards with their outcomes, the footer) and its widget models are closed, so a notebook of many
turns keeps no widgets but the session's control bar, and a saved notebook shows every turn
without a widget manager.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from IPython.display import display

from ..agent.decisions import Decision
from ..render.code import highlight_python
from ..render.markdown import WRAP_STYLE, escape, html_block, render_html, summarize
from .cards import Card, card_for
from .control import ControlBar
from .markdown import StreamingMarkdown, html_output, set_html
from .shared import close_tree, look, shared, widget_bundle
from .static import card_html, decision_markdown

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
    parts = [  # long paths and commands wrap (in the summary too) inside a narrow cell
        f"<details class=\"pw-tool\" style=\"{WRAP_STYLE}\"{opened}>",
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
    """The widget view of one turn (implements the session's ``TurnView``).

    ``show()`` puts it in the current cell (after the session's control bar); ``turn_done()``
    makes it static once the turn has ended.
    """

    children: tuple[w.Widget, ...]  # (the box's trait, for the type checker)

    def __init__(self, session: Session, prompt: str, control: ControlBar) -> None:
        self.session = session
        self.prompt = prompt
        self.control = control
        self.footer: w.HTML | None = None
        self._stream: StreamingMarkdown | None = None
        self._tools: dict[str, tuple[w.Output | None, int, str, dict[str, Any]]] = {}
        self._transcript: list[str] = []  # each part as plain text
        self._parts_html: dict[int, str] = {}  # parts whose HTML is not render_html(text)
        self._decisions: dict[int, Decision] = {}  # parts that are cards
        self.cards: list[Card] = []
        self._handle: Any = None
        self._bar: Any = None  # the control bar's display in this cell
        self._turn_done = False
        self.static = False
        self._tasks: tuple[int, w.Output | None] | None = None  # the checklist's part
        super().__init__(layout=shared("layout"), _dom_classes=("pw-turn",))

    # -- optional hooks (the runner calls them if a view has them) ----------------------------
    def tasks_updated(self, tasks: list[dict[str, Any]]) -> None:
        """The agent's task list changed: one checklist in the turn, updated in place (its
        final state stays in the static view)."""
        from .progress import tasks_html, tasks_markdown

        html = tasks_html(tasks)
        if self._tasks is None:
            out = None if self.static else html_output(html, layout=shared("layout"))
            self._tasks = (self._part(tasks_markdown(tasks), html_block(html, "pw-html"), out),
                           out)
            return
        i, out = self._tasks
        self._transcript[i] = tasks_markdown(tasks)
        self._parts_html[i] = html_block(html, "pw-html")
        if self.static:
            self._update_static()
        elif out is not None:
            set_html(out, html)

    def files_changed(self, turn: Any) -> None:
        """The turn changed files: say which, and how to put them back (the control bar
        offers Rewind files for the session's latest such turn)."""
        from .rewind import files_changed_html

        text, html = files_changed_html(turn.number, turn.files, self.session.options.cwd)
        self._part(text, html)

    def show(self) -> Any:
        """Display the control bar and this view in the current cell; returns the view's
        display handle."""
        self._bar = self.control.show()
        self._handle = display(self.mimebundle(), raw=True, display_id=True)
        return self._handle

    # -- the TurnView protocol -----------------------------------------------------------------
    def text(self, delta: str) -> None:
        if self.static:  # a late part: the static view takes it in
            self._transcript.append(delta)
            self._update_static()
            return
        if self._stream is None:
            box = w.VBox(layout=shared("layout"))
            self._add(box)
            self._stream = StreamingMarkdown(box)
        self._stream.append(delta)

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream.flush()
            self._parts_html[len(self._transcript)] = self._stream.html()
            self._transcript.append(self._stream.text)
            self._stream = None

    def _add(self, widget: w.Widget) -> None:
        self.children = (*self.children, widget)

    def _part(self, text: str, safe_html: str | None = None,
              widget: w.Widget | None = None) -> int:
        """Add a part: its plain text, its HTML (if not its text rendered), its live widget."""
        self._close_stream()
        i = len(self._transcript)
        self._transcript.append(text)
        if safe_html is not None:
            self._parts_html[i] = safe_html
        if self.static:
            self._update_static()
        elif widget is not None:
            self._add(widget)
        return i

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        html = _tool_html(name, tool_input)
        out = None if self.static else html_output(html, layout=shared("layout"))
        i = self._part(f"`{name}` {summarize(tool_input, 100)}", html_block(html, "pw-html"), out)
        self._tools[tool_use_id] = (out, i, name, tool_input)

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        entry = self._tools.get(tool_use_id)
        if entry is None:
            return
        out, i, name, tool_input = entry
        html = _tool_html(name, tool_input, content, is_error, done=True)
        self._parts_html[i] = html_block(html, "pw-html")
        if self.static:
            self._update_static()
        elif out is not None:
            set_html(out, html)

    def decision(self, decision: Decision) -> None:
        card = None if self.static else card_for(decision)
        i = self._part(decision_markdown(decision), widget=card)
        self._decisions[i] = decision
        if card is not None:
            self.cards.append(card)

        def follow() -> None:  # the fallbacks say how it ended; a finished turn can go static
            self._transcript[i] = decision_markdown(decision)
            if self.static:
                self._update_static()
            elif self._turn_done and decision.done:
                _soon(self._settle)

        decision.watch(follow)

    def marker(self, text: str) -> None:
        html = html_block(f'<small style="color:#6b7280">— {escape(text)} —</small>', "pw-html")
        self._part(f"*— {text} —*", html, None if self.static else _html_widget(html))

    def error(self, message: str) -> None:
        html = html_block(f'<div style="color:#b91c1c"><b>{escape(message)}</b></div>', "pw-html")
        self._part(f"**{message}**", html, None if self.static else _html_widget(html))

    def finished(self, summary: str, ok: bool) -> None:
        mark = "✓" if ok else "✗"
        html = html_block(f'<small style="color:#6b7280">{mark} {escape(summary)}</small>',
                          "pw-html pw-footer")
        footer = None if self.static else _html_widget(html)
        self._part(f"*{mark} {summary}*", html, footer)
        self.footer = footer
        if self._bar is not None:
            self.control.ran_under(self._bar)

    # -- becoming static -----------------------------------------------------------------------
    def turn_done(self) -> None:
        """The turn has ended (or never started): once no decision of it is open, show the
        static rendering in place of the widgets and close them."""
        self._turn_done = True
        self._settle()

    def _settle(self) -> None:
        if self.static or any(not d.done for d in self._decisions.values()):
            return
        self._close_stream()
        self.static = True
        self._update_static()
        for card in self.cards:
            card._closed = True
        close_tree([self])

    def _update_static(self) -> None:
        if self._handle is None:
            return
        try:
            self._handle.update(self.static_bundle(), raw=True)
        except Exception:  # a closed frontend channel must not break the turn
            pass

    # -- static rendering and fallbacks ----------------------------------------------------------
    def fallback_markdown(self) -> str:
        """Safe Markdown (one raw HTML block) of what happened so far: the static view."""
        # Each part is rendered on its own, so streamed text (already rendered block by
        # block while it arrived) is not rendered a second time.
        head = f"**claude** ({self.session.name}): {self.prompt.strip()[:200]}"
        parts = [f'<div class="pw-turn pw-static" style="{WRAP_STYLE}">', render_html(head)]
        for i, t in enumerate(self._transcript):
            d = self._decisions.get(i)
            parts.append(card_html(d) if d is not None
                         else self._parts_html.get(i) or render_html(t))
        if self._stream is not None:
            parts.append(self._stream.html())
        parts.append("</div>")
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

    def static_bundle(self) -> dict[str, Any]:
        """The finished turn's display bundle: no widgets, Markdown (safe HTML) and text."""
        return {"text/markdown": self.fallback_markdown(), "text/plain": self.fallback_text()}

    def mimebundle(self) -> dict[str, Any]:
        """The display bundle: the widget view (until static), with Markdown and text
        fallbacks."""
        if self.static:
            return self.static_bundle()
        return {**widget_bundle(self), **self.static_bundle()}


def _html_widget(safe_html: str) -> w.HTML:
    return w.HTML(safe_html, **look("layout", "html"))


def _soon(fn: Any) -> None:
    import asyncio

    try:
        asyncio.get_running_loop().call_soon(fn)
    except RuntimeError:
        fn()
