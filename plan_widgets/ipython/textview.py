"""The text view of a turn, for terminal IPython and other frontends without widgets.

Replies and plans are Markdown rendered with ``rich`` when it is installed and the output is a
terminal, plain text otherwise (``termout``); everything from the model is made terminal-safe.
Decisions are asked at the prompt: ``input()`` runs in a worker thread so the event loop (and
with it the CLI's messages) keeps going while the user types, and the decision is resolved
back on the loop. An answer that is not one of the choices is asked again
(:mod:`plan_widgets.render.prompts`). What a decision shows and asks is its kind's terminal
form (:mod:`plan_widgets.widgets.kinds`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ..agent.checklist import FOLDED_TOOLS
from ..agent.decisions import Decision
from ..agent.tasks import spawn
from ..render import prompts
from ..render.agents import AGENT_TOOLS, agent_state, count, first_line
from ..render.decision import Described
from ..render.markdown import summarize
from . import lineinput
from .termout import MarkdownStream, TerminalOut, terminal_safe

if TYPE_CHECKING:
    from ..widgets.kinds import Kind

_SUB_LINES = 6  # lines of a subagent's text block shown in a terminal


class TextTurnView:
    """Prints the turn as text; asks decisions at the prompt when ``interactive``.

    ``use_rich``: render Markdown with rich (default: when installed and ``stream`` is a
    terminal). ``read_line`` replaces the terminal (it is called in a worker thread).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interactive: bool = True,
        use_rich: bool | None = None,
        read_line: Callable[[str], str] | None = None,
    ) -> None:
        self.out = TerminalOut(stream, use_rich)
        self.stream = self.out.stream
        self.interactive = interactive
        self.read_line = read_line
        self.text_parts: list[str] = []
        self._md = MarkdownStream(self.out)
        self._agents: dict[str, str] = {}  # Agent call id -> its description
        self._agent_seen: dict[str, str] = {}  # Agent call id -> its state as last said
        self._live = ""  # the live line as last printed (without its countdown)
        self._mark = 0  # text_parts when the newest message (or finished block) began

    def _p(self, s: str) -> None:
        self._md.flush()
        self.out.write(s)

    def text(self, delta: str) -> None:
        self.text_parts.append(delta)
        self._md.feed(delta)

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        if name in FOLDED_TOOLS:  # the "[tasks 2/3: …]" line says it (a failure still shows)
            return
        self._md.flush()
        if name in AGENT_TOOLS:
            self.tool_started_agent(tool_use_id, tool_input)
        self.out.line(f"  [{name}] {summarize(tool_input, 100)}", style="cyan")

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        if is_error:  # the first line of why (a refusal: the CLI's reason)
            self._md.flush()
            self.out.line(f"  [error] {first_line(content, 100)}", style="red")

    def marker(self, text: str) -> None:
        self._md.flush()
        self.out.line(f"-- {text} --", style="dim")

    # -- a bad day: a terminal cannot take printed text back, so it says what happens --------
    def live_line(self, text: str) -> None:
        """A retry's line (once per attempt, not each second of its countdown), or
        "compacting…"."""
        key = re.sub(r"retrying (in \d+ s|now)", "", text)
        if key != self._live:
            self._live = key
            self.marker(f"⟳ {text}")

    def live_line_done(self, quiet: str | None) -> None:
        self._live = ""
        if quiet:
            self.marker(quiet)

    def message_started(self) -> None:
        self._mark = len(self.text_parts)

    def message_dropped(self) -> None:
        """A cut stream: what it printed since its last finished block cannot be taken back."""
        if len(self.text_parts) > self._mark:
            self.marker("the stream was cut off here; the reply goes on below")

    def tasks_updated(self, tasks: list[dict[str, Any]]) -> None:
        from ..agent.checklist import progress

        self._md.flush()
        done, total = progress(tasks)
        now = next((t for t in tasks if t.get("status") == "in_progress"), None)
        doing = f": {summarize(now.get('subject', ''), 80)}" if now else ""
        self.out.line(f"  [tasks {done}/{total}{doing}]", style="cyan")

    def files_changed(self, turn: Any) -> None:
        self._md.flush()
        files = ", ".join(summarize(f, 60) for f in turn.files[:6])
        self.out.line(f"  files changed: {files} (put them back: %claude rewind "
                      f"{turn.number} --yes)", style="dim")

    # -- issue 21: subagents under their Agent line, thinking, agents' states ----------------
    def tool_started_agent(self, tool_use_id: str, tool_input: dict[str, Any]) -> None:
        self._agents[tool_use_id] = str(tool_input.get("description") or "subagent")

    def _sub(self, parent: str) -> str:
        """The indent and label of a subagent's lines: its description."""
        return f"    [{summarize(self._agents.get(parent, 'subagent'), 40)}]"

    def subagent_text(self, parent_tool_use_id: str, text: str) -> None:
        self._md.flush()
        for i, ln in enumerate(text.strip().splitlines()[:_SUB_LINES]):
            self.out.line(f"{self._sub(parent_tool_use_id) if i == 0 else '     '} {ln}",
                          style="dim")
        if len(text.strip().splitlines()) > _SUB_LINES:
            self.out.line("      …", style="dim")

    def subagent_tool_started(self, parent_tool_use_id: str, tool_use_id: str, name: str,
                              tool_input: dict[str, Any]) -> None:
        self._md.flush()
        self.out.line(f"{self._sub(parent_tool_use_id)} [{name}] {summarize(tool_input, 80)}",
                      style="cyan")

    def subagent_tool_finished(self, parent_tool_use_id: str, tool_use_id: str, content: Any,
                               is_error: bool) -> None:
        if is_error:
            self._md.flush()
            self.out.line(f"{self._sub(parent_tool_use_id)} [error] {first_line(content, 100)}",
                          style="red")

    def agent_updated(self, tool_use_id: str, record: Any) -> None:
        """A short line when a subagent starts or ends (progress is left to %claude agents:
        one line per tool would drown the reply)."""
        self._agents[tool_use_id] = record.description or self._agents.get(tool_use_id, "")
        now = "running" if record.running else record.status
        if self._agent_seen.get(tool_use_id) == now:
            return
        self._agent_seen[tool_use_id] = now
        self._md.flush()
        state = agent_state(record)
        said = f" — {summarize(record.summary, 120)}" if record.summary and not record.running \
            else ""
        self.out.line(f"  [agent {summarize(record.description, 60)!r}: {now}"
                      f"{' · ' + state if state and not record.running else ''}]{said}",
                      style="magenta")

    def thinking(self, text: str) -> None:
        self._md.flush()
        self.out.line(f"  (Thinking… {count(len(text), 'chars')})", style="dim")

    def error(self, message: str) -> None:
        self._md.flush()
        self.out.line(message, style="bold red")

    def finished(self, summary: str, ok: bool) -> None:
        self._md.flush()
        self.out.line(f"({'ok' if ok else 'failed'}: {summary})", style="dim")

    def decision(self, decision: Decision) -> None:
        self._md.flush()
        who = Described.of(decision).asker  # a subagent asks: say which (as its card does)
        if who:
            self.out.line("")
            self.out.line(who, style="bold magenta")
        _kind(decision).show_text(decision, _Prompt(self, decision))
        from .unattended import someone_at_terminal

        if self.interactive and someone_at_terminal():  # else a rule decides (unattended.py)
            spawn(self._ask(decision))

    async def _ask(self, d: Decision) -> None:
        try:
            await _kind(d).ask_text(d, _Prompt(self, d))
        except (EOFError, OSError):
            d.expire("close")


def _kind(d: Decision) -> Kind[Any]:
    """``d``'s kind, whose terminal form shows and asks it. Its module holds its card too
    (ipywidgets): imported when a decision first shows, so a terminal session that is never
    asked anything loads no widget library."""
    from ..widgets.kinds import kind_of

    return kind_of(d)


class _Prompt:
    """What a decision kind's terminal form prints with and asks with
    (:class:`~plan_widgets.widgets.kinds.frame.Terminal`), for one decision of a text view.

    ``input()`` runs in a worker thread, so the loop (and with it the CLI's messages) goes
    on while the user types; the terminal's reader gives up when the decision ends without an
    answer (``lineinput``)."""

    def __init__(self, view: TextTurnView, d: Decision) -> None:
        self.view = view
        self.out = view.out
        self.d = d
        self._ended: asyncio.Event | None = None  # the decision ended (answered, expired, …)

    def line(self, text: str, style: str | None = None) -> None:
        self.out.line(text, style=style)

    def panel(self, title: str, src: str, note: str | None = None) -> None:
        self.out.panel(title, src, note)

    def safe(self, text: Any) -> str:
        return terminal_safe(text)

    async def ask(self, prompt: str) -> str:
        loop = asyncio.get_running_loop()
        if self._ended is None:
            ended = self._ended = asyncio.Event()
            self.d.on_resolved(lambda _d: _soon(loop, ended.set))
        # read in a worker thread, so the loop goes on; resolved back here
        if self.view.read_line is None:
            line = await lineinput.read_line(prompt, self._ended)
        else:
            line = await loop.run_in_executor(None, self.view.read_line, prompt)
        if line is None or self.d.done:  # decided meanwhile: this answer is for nothing
            if line is None:
                self.out.line("")  # the prompt's line, left unanswered, ends here
            raise EOFError
        return line.strip()

    async def pick(self, prompt: str, choices: tuple[prompts.Choice, ...]) -> prompts.Choice:
        while True:
            answer = await self.ask(prompt)
            c = prompts.choose(answer, choices)
            if c is not None:
                return c
            self.out.line(prompts.not_a_choice(answer, choices), style="yellow")


def _soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> None:
    """Call ``fn`` on ``loop`` (from any thread; not once the loop is closed)."""
    if not loop.is_closed():
        loop.call_soon_threadsafe(fn)
