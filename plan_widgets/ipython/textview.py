"""The text view of a turn, for terminal IPython and other frontends without widgets.

Decisions are asked at the prompt; ``input()`` runs in a worker thread so the event loop
(and with it the CLI's messages) keeps going while the user types.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from ..agent.decisions import Decision, PlanDecision, QuestionDecision, ToolDecision
from ..agent.tasks import spawn
from ..render.markdown import summarize


class TextTurnView:
    """Prints the turn as plain text; asks decisions at the prompt when ``interactive``."""

    def __init__(self, stream: TextIO | None = None, interactive: bool = True) -> None:
        self.stream = stream or sys.stdout
        self.interactive = interactive
        self.text_parts: list[str] = []

    def _p(self, s: str) -> None:
        self.stream.write(s)
        self.stream.flush()

    def text(self, delta: str) -> None:
        self.text_parts.append(delta)
        self._p(delta)

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self._p(f"\n  [{name}] {summarize(tool_input, 100)}\n")

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        if is_error:
            self._p(f"  [error] {summarize(content, 100)}\n")

    def marker(self, text: str) -> None:
        self._p(f"\n-- {text} --\n")

    def error(self, message: str) -> None:
        self._p(f"\n{message}\n")

    def finished(self, summary: str, ok: bool) -> None:
        self._p(f"\n({'ok' if ok else 'failed'}: {summary})\n")

    def decision(self, decision: Decision) -> None:
        if isinstance(decision, PlanDecision):
            self._p("\n=== Plan proposed ===\n" + decision.plan + "\n=====================\n")
        elif isinstance(decision, QuestionDecision):
            for q in decision.questions:
                self._p(f"\n? {q.get('question', '')}\n")
                for i, o in enumerate(q.get("options") or [], 1):
                    self._p(f"   {i}. {o.get('label', '')}  {o.get('description', '')}\n")
        elif isinstance(decision, ToolDecision):
            self._p(f"\nAllow {decision.tool} {summarize(decision.input, 160)}?\n")
        if self.interactive:
            spawn(self._ask(decision))

    async def _ask(self, d: Decision) -> None:
        loop = asyncio.get_running_loop()

        async def ask(prompt: str) -> str:
            line = (await loop.run_in_executor(None, input, prompt)).strip()
            if d.done:  # decided meanwhile (timeout, interrupt): this answer is for nothing
                raise EOFError
            return line

        try:
            if isinstance(d, PlanDecision):
                a = await ask("[a]pprove / approve + auto-[e]dits / [k]eep planning: ")
                if a.lower().startswith("a"):
                    d.approve(by="user")
                elif a.lower().startswith("e"):
                    d.approve("acceptEdits", by="user")
                else:
                    d.reject(await ask("feedback: "), by="user")
            elif isinstance(d, QuestionDecision):
                answers: dict[str, str | list[str]] = {}
                for q in d.questions:
                    labels = [str(o.get("label", "")) for o in q.get("options") or []]
                    raw = await ask("choice (number(s) or text): ")
                    picks = []
                    for part in raw.split(","):
                        part = part.strip()
                        if part.isdigit() and 0 < int(part) <= len(labels):
                            picks.append(labels[int(part) - 1])
                        elif part:
                            picks.append(part)
                    answers[str(q.get("question", ""))] = picks
                d.answer(answers, by="user")
            elif isinstance(d, ToolDecision):
                a = await ask("[y]es / [a]lways / [n]o: ")
                if a.lower().startswith("y"):
                    d.allow(by="user")
                elif a.lower().startswith("a"):
                    d.allow(always=True, by="user")
                else:
                    d.deny(await ask("reason (optional): "), by="user")
        except (EOFError, OSError):
            d.expire("close")
