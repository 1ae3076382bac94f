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

from ..agent.checklist import FOLDED_TOOLS
from ..agent.decisions import Decision
from ..render.agents import AGENT_TOOLS, error_state, shown_result
from ..render.code import highlight_python
from ..render.decision import paused_at
from ..render.look import ERROR, MUTED, WARN
from ..render.markdown import WRAP_STYLE, escape, html_block, render_html, summarize
from ..render.paths import home_short
from . import shared as sh
from .control import ControlBar
from .follow import CellStack
from .kinds import Card, card_for, card_html, decision_markdown, plan_spares
from .liveline import LiveLine, drop_since, live_html, mark
from .markdown import StreamingMarkdown, html_output, set_html
from .nested import Nested
from .shared import close_tree, look, shared, shown_here, soon, update_display, widget_bundle

if TYPE_CHECKING:
    from ..agent.session import Session

PLAIN_LIMIT = 20_000  # characters of the plain-text fallback
# Marks in the fonts a machine has without an emoji font (DejaVu, Liberation: checked in
# Chromium on Linux, issue 31): emoji such as a page or a magnifier show as empty boxes there.
TOOL_ICON = {"Bash": "$", "Write": "+", "Edit": "±", "Read": "≡", "Glob": "*", "Grep": "/"}
OTHER_TOOL = "•"


def _tool_html(name: str, tool_input: dict[str, Any], result: Any = None,
               is_error: bool = False, done: bool = False) -> str:
    code = tool_input.get("code") if name.startswith("mcp__") else None
    path = home_short(str(tool_input.get("file_path") or tool_input.get("notebook_path") or ""))
    get = tool_input.get
    head = summarize(get("command") or path or get("pattern") or get("title") or code
                     or get("name") or tool_input, 100)
    icon = TOOL_ICON.get(name, OTHER_TOOL)
    state = (error_state(result) if is_error else "") if done else " …"  # ✗ and why, in a line
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
    text = shown_result(result, is_error) if done else ""
    if text:
        if len(text) > 4000:
            text = text[:4000] + "\n…"
        parts.append(f"<pre>{escape(text)}</pre>")
    parts.append("</details>")
    # newlines inside <pre> must not make blank lines (that would end the HTML block)
    return "".join(p.replace("\n", "&#10;") for p in parts)


class WidgetTurnView(w.VBox):
    """The widget view of one turn (a :class:`~plan_widgets.agent.turn.TurnView`, with the
    optional hooks the runner calls when a view has them).

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
        self.nested = Nested(self, _tool_html)  # Agent lines with their subagents (nested.py)
        self._stack: Any = None  # the views shown below this one in its cell (follow.py)
        self._waiting: w.HTML | None = None  # "Waiting for your decision", once the cell returned
        self._returned = False
        self.live = LiveLine(self)  # a retry's countdown, "compacting…" (liveline.py)
        self._msg: tuple[int, frozenset[int]] | None = None  # where the newest message began
        super().__init__(layout=shared("layout"), _dom_classes=("pw-turn",))

    # -- optional hooks (the runner calls them if a view has them: runner._hook) -------------
    def tasks_updated(self, tasks: list[dict[str, Any]]) -> None:
        """The agent's task list changed: one checklist, updated in place (static view: its end)."""
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
        """The turn changed files: say which, and how to undo it (the bar's Rewind files)."""
        from .rewind import files_changed_html

        text, html = files_changed_html(turn.number, turn.files, self.session.options.cwd)
        self._part(text, html)

    # -- optional hooks too: subagents under their Agent line, thinking ------------------------
    def subagent_text(self, parent_tool_use_id: str, text: str) -> None:
        """A subagent's text block: under its Agent line, never in the reply."""
        self.nested.text(parent_tool_use_id, text)

    def subagent_tool_started(self, parent_tool_use_id: str, tool_use_id: str, name: str,
                              tool_input: dict[str, Any]) -> None:
        self.nested.tool_started(parent_tool_use_id, tool_use_id, name, tool_input)

    def subagent_tool_finished(self, parent_tool_use_id: str, tool_use_id: str, content: Any,
                               is_error: bool) -> None:
        self.nested.tool_finished(parent_tool_use_id, tool_use_id, content, is_error)

    def agent_updated(self, tool_use_id: str, record: Any) -> None:
        """The subagent of the Agent line ``tool_use_id`` started, progressed or ended."""
        self.nested.updated(tool_use_id, record)

    def thinking(self, text: str) -> None:
        """A whole thinking block: one folded line, apart from the answer."""
        self.nested.thinking(text)

    def live_line(self, text: str) -> None:
        self.live.show(text)

    def live_line_done(self, quiet: str | None) -> None:
        self.live.done(quiet)

    def message_started(self) -> None:
        self._msg = mark(self)
        if self.session.plan_in_force and not self._turn_done:  # a plan may follow: its
            plan_spares.ready(self.session.options.mode, self)  # card's controls now (spares)

    def message_dropped(self) -> None:
        """The message streaming now was cut (the CLI sends it again): what it showed goes."""
        drop_since(self, self._msg)

    # -- in the cell ---------------------------------------------------------------------------
    def show(self) -> Any:
        """Display the control bar and this view in the current cell; returns its handle."""
        self._bar = self.control.show()
        self._handle = shown_here(self.mimebundle())
        return self._handle

    def follow(self, title: str) -> WidgetTurnView:
        """A view shown below this one in the same cell display (a turn the CLI started by
        itself, a card while no cell runs): see :mod:`.follow`."""
        root = self._stack.root if self._stack is not None else self
        view = WidgetTurnView(self.session, title, self.control)
        CellStack.of(root).add(view, title)
        return view

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
        last = () if self._waiting is None else (self._waiting,)  # the waiting line stays last
        self.children = (*(c for c in self.children if c is not self._waiting), widget, *last)

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
        if name in AGENT_TOOLS:  # its subagent's output goes under it (widgets/nested.py)
            self.nested.started(tool_use_id, name, tool_input)
            return
        if name in FOLDED_TOOLS:  # the checklist shows it; a line only if it fails
            self._tools[tool_use_id] = (None, -1, name, tool_input)
            return
        html = _tool_html(name, tool_input)
        out = None if self.static else html_output(html, layout=shared("layout"))
        i = self._part(f"`{name}` {summarize(tool_input, 100)}", html_block(html, "pw-html"), out)
        self._tools[tool_use_id] = (out, i, name, tool_input)

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        if self.nested.finished(tool_use_id, content, is_error):
            return
        entry = self._tools.get(tool_use_id)
        if entry is None:
            return
        out, i, name, tool_input = entry
        html = _tool_html(name, tool_input, content, is_error, done=True)
        if i < 0:  # a task tool: one quiet line if it failed, none if it worked
            if is_error:
                self._part(f"`{name}`{error_state(content)}",
                           html_block(html, "pw-html"),
                           None if self.static else html_output(html, layout=shared("layout")))
            return
        if is_error:  # the text fallback says why too
            self._transcript[i] += error_state(content)
        self._parts_html[i] = html_block(html, "pw-html")
        if self.static:
            self._update_static()
        elif out is not None:
            set_html(out, html)

    def decision(self, decision: Decision) -> None:
        if self.nested.decision(decision):  # a subagent's card: under its Agent line
            return
        card = None if self.static else card_for(decision)
        i = self._part(decision_markdown(decision), widget=card)
        self._decisions[i] = decision
        if card is not None:
            self.cards.append(card)

        def follow() -> None:  # the fallbacks say how it ended; a finished turn can go static
            self._transcript[i] = decision_markdown(decision)
            self._say_waiting()
            if self.static:
                self._update_static()
            elif self._turn_done and decision.done:
                soon(self._settle)

        decision.watch(follow)
        self._say_waiting()  # a later card: the line names it

    def marker(self, text: str) -> None:
        html = html_block(f'<small style="color:{MUTED}">— {escape(text)} —</small>', "pw-html")
        self._part(f"*— {text} —*", html, None if self.static else _html_widget(html))

    def error(self, message: str) -> None:
        html = html_block(f'<div style="color:{ERROR}"><b>{escape(message)}</b></div>', "pw-html")
        self._part(f"**{message}**", html, None if self.static else _html_widget(html))

    def finished(self, summary: str, ok: bool) -> None:
        mark = "✓" if ok else "✗"
        html = html_block(f'<small style="color:{MUTED}">{mark} {escape(summary)}</small>',
                          "pw-html pw-footer")
        footer = None if self.static else _html_widget(html)
        # the record says what the turn ran under (the live view has the bar right above;
        # the bar's own line is not updated while its cell is the newest: control.py's doc)
        ran = self.control.ran_words()
        said = f"{summary} · {ran}" if ran else summary
        self._part(f"*{mark} {said}*", html_block(
            f'<small style="color:{MUTED}">{mark} {escape(said)}</small>', "pw-html pw-footer"),
            footer)
        self.footer = footer
        if self._bar is not None:
            self.control.ran_under(self._bar)

    def cell_returned(self) -> None:
        """The cell returned while a decision of this turn waits: say so at the turn's end, in
        a line that names the newest waiting decision's kind and goes once none waits (the
        cell's caller, ipython/cell.py, calls it)."""
        self._returned = True
        self._say_waiting()

    def waiting_line(self) -> str:
        """The waiting line (plain text), or "" when none of this turn's decisions waits."""
        kind = self._waiting_kind()
        return (f"Waiting for your decision ({kind}) on the card above; the turn goes on after "
                "it.") if kind else ""

    def _waiting_kind(self) -> str:
        """The newest waiting decision's kind, once the cell returned; else ""."""
        waiting = [d for d in self._decisions.values()
                   if not d.done and not getattr(d, "superseded", False)]
        return waiting[-1].kind if self._returned and waiting else ""

    def paused_line(self) -> str:
        """The waiting line as a saved copy says it (:func:`paused_at`), or ""."""
        kind = self._waiting_kind()
        return paused_at(kind) if kind else ""

    def _say_waiting(self) -> None:
        line = self.waiting_line()
        html = (html_block(f'<small style="color:{WARN}">{escape(line)}</small>', "pw-html")
                if line else "")
        if self._waiting is not None and not line:
            self.children = tuple(c for c in self.children if c is not self._waiting)
            close_tree([self._waiting])
            self._waiting = None
        elif line and not self.static:
            if self._waiting is None:
                line_widget = _html_widget(html)
                self._add(line_widget)
                self._waiting = line_widget  # (from now on a new part goes above it)
            self._waiting.value = html

    # -- becoming static -----------------------------------------------------------------------
    def turn_done(self) -> None:
        """The turn has ended (or never started): plan card controls it opened ahead for no
        card close (kinds/plan_spares); once no decision of it is open, it turns static."""
        self._turn_done = True
        plan_spares.release(self)
        self._settle()

    def _settle(self) -> None:
        if self.static or any(not d.done for d in self._decisions.values()) or \
                self.nested.open():
            return
        self._close_stream()
        self.static = True
        self._update_static()
        for card in self.cards:
            card.closed_with_turn()
        if self._stack is None or not self._stack.holds_open(self):  # (follow.py's doc)
            sh.close_or_keep(self, self._handle, self.static_bundle())  # (issue 36)

    def _update_static(self) -> None:
        if self._handle is None:
            return
        update_display(self._handle, self.static_bundle(), "turn")

    # -- static rendering and fallbacks ----------------------------------------------------------
    def fallback_markdown(self) -> str:
        """Safe Markdown (one raw HTML block) of what happened so far: the static view."""
        # Each part is rendered on its own, so streamed text (already rendered block by
        # block while it arrived) is not rendered a second time.
        head = f"**claude** (session {self.session.name}): {self.prompt.strip()[:200]}"
        parts = [f'<div class="pw-turn pw-static" style="{WRAP_STYLE}">', render_html(head)]
        for i, t in enumerate(self._transcript):
            d = self._decisions.get(i)
            parts.append(card_html(d) if d is not None
                         else self._parts_html.get(i) or render_html(t))
        if self._stream is not None:
            parts.append(self._stream.html())
        if self.live.text:
            parts.append(live_html(self.live.text))
        if line := self.paused_line():  # (a saved copy says when it was true)
            parts.append(html_block(f"<small>{escape(line)}</small>", "pw-html"))
        parts.append("</div>")
        return "\n".join(parts)

    def fallback_text(self) -> str:
        """Plain text of what happened so far."""
        parts = [f"claude (session {self.session.name}): {self.prompt.strip():.200}",
                 *self._transcript]
        if self._stream is not None:
            parts.append(self._stream.text)
        if self.live.text:
            parts.append(f"⟳ {self.live.text}")
        if line := self.paused_line():
            parts.append(line)
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
        if self._stack is not None:  # views follow it in its cell: their display
            return self._stack.bundle()
        if self.static:
            return self.static_bundle()
        return {**widget_bundle(self), **self.static_bundle()}


def _html_widget(safe_html: str) -> w.HTML:
    return w.HTML(safe_html, **look("layout", "html"))
