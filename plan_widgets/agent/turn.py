"""One turn: a prompt, the agent's work on it, and where its output goes (a :class:`TurnView`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from .decisions import Decision

log = logging.getLogger("plan_widgets")


class TurnView(Protocol):
    """Where one turn's output goes (widgets in a kernel, text in a terminal)."""

    def text(self, delta: str) -> None: ...
    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None: ...
    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None: ...
    def decision(self, decision: Decision) -> None: ...
    def marker(self, text: str) -> None: ...
    def error(self, message: str) -> None: ...
    def finished(self, summary: str, ok: bool) -> None: ...


def call_hook(view: Any, name: str, *args: Any) -> None:
    """Call an optional view hook (``tasks_updated``, ``live_line``, ...) if the view has
    it; views without it show nothing extra, and a failing hook never fails the turn."""
    fn = getattr(view, name, None)
    if fn is None:
        return
    try:
        fn(*args)
    except Exception:
        log.exception("the turn view's %s failed", name)


class NullView:
    """A view that shows nothing (plain Python use)."""

    def text(self, delta: str) -> None:
        pass

    def tool_started(self, tool_use_id: str, name: str, tool_input: dict[str, Any]) -> None:
        pass

    def tool_finished(self, tool_use_id: str, content: Any, is_error: bool) -> None:
        pass

    def decision(self, decision: Decision) -> None:
        pass

    def marker(self, text: str) -> None:
        pass

    def error(self, message: str) -> None:
        pass

    def finished(self, summary: str, ok: bool) -> None:
        pass


class Turn:
    """One prompt and the agent's work on it. ``await turn`` waits for its end."""

    def __init__(self, session: Any, prompt: str, view: TurnView, plan: bool = False,
                 origin: str = "user") -> None:
        self.session = session
        self.prompt = prompt
        self.origin = origin
        """``user``: a prompt sent from here; ``agent``: a turn the CLI started by itself
        (``prompt`` then says why)."""
        self.view = view
        self.plan = plan
        self.verbatim = False
        """Sent as text even if it starts with ``/`` (the CLI runs no command)."""
        self.number = 0
        self._text: list[str] = []  # joined on demand: `text += delta` would copy it each time
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self.started_at: float | None = None
        self._done: asyncio.Future[Turn] = asyncio.get_running_loop().create_future()
        self._streamed: set[str] = set()
        self._mark: int | None = None  # len(text) when the message streaming now started
        self._held: list[Any] = []  # events of that message, logged once it is complete
        self._tools: dict[str, str] = {}
        self.tool_inputs: dict[str, dict[str, Any]] = {}
        """Each tool call's input, by tool use id."""
        self.message_id: str | None = None
        """The uuid the prompt was sent with (its file checkpoint: :meth:`rewind`)."""
        self.files: list[str] = []
        """The files this turn's Write/Edit tools changed, in order."""
        self.counted = True
        """False: a turn the person never sees (start fresh's ``/clear``): it takes no number
        and is not logged as a turn, so turn numbers are the ones the views show."""
        self.handed_over = False
        """Its plan was approved to start fresh: the CLI's "interrupted" end is no failure."""
        self.decisions: list[Decision] = []
        """The decisions shown in this turn (their waits are the person's time)."""

    def waited(self, now: float | None = None) -> float:
        """Seconds this turn's cards waited for the person (overlapping waits once)."""
        now = time.time() if now is None else now
        spans = sorted((d.asked_at, d.outcome.at if d.outcome is not None else now)
                       for d in self.decisions)
        total, reach = 0.0, float("-inf")
        for start, end in spans:
            start = max(start, reach)
            if end > start:
                total, reach = total + end - start, end
        return total

    @property
    def text(self) -> str:
        """The agent's text in this turn so far."""
        if len(self._text) > 1:
            self._text[:] = ["".join(self._text)]
        return self._text[0] if self._text else ""

    @property
    def done(self) -> bool:
        """True once the turn has ended (successfully or not)."""
        return self._done.done()

    @property
    def ok(self) -> bool:
        """True if the turn ended without error."""
        return self.done and self.error is None

    def __await__(self) -> Any:
        return asyncio.shield(self._done).__await__()

    def add_done_callback(self, fn: Callable[[Turn], None]) -> None:
        """Call ``fn(turn)`` once the turn has ended (at once if it has)."""
        self._done.add_done_callback(lambda _f: fn(self))

    async def wait(self, timeout: float | None = None) -> Turn:
        """Wait for the turn to end; raises TimeoutError after ``timeout`` seconds."""
        return await asyncio.wait_for(asyncio.shield(self._done), timeout)

    def finish(self, error: str | None = None) -> None:
        """End the turn (the session calls this once; later calls change nothing)."""
        if self._done.done():
            return
        self.error = error
        self._done.set_result(self)

    # -- what the turn learns as the CLI streams (see the runner's _on_* handlers) ----------
    def message_started(self, message_id: str | None) -> None:
        """A new model message: its text will stream (and is then not shown twice). One
        started before and never ended was cut: what it showed since its last finished
        text block goes first, as the CLI drops it too (docs/cli.md#bad-day)."""
        self.drop_unfinished()
        if message_id:
            self._streamed.add(message_id)
        if self._text and not self._text[-1].endswith("\n\n"):
            self._text.append("\n\n")  # each message its own paragraph in turn.text
        self._mark = len(self.text)
        if hasattr(self.view, "message_started"):
            call_hook(self.view, "message_started")

    def assistant_text(self, text: str, message_id: str | None) -> None:
        """A finished text block (its ``AssistantMessage``): shown if it was not streamed;
        if it was, it is the truth, and survives a cut (:meth:`block_done`)."""
        if not self.was_streamed(message_id):
            self.add_text(text)
        else:
            self.block_done(text)

    def block_done(self, text: str | None = None) -> None:
        """A text block of the message streaming now is finished (its ``AssistantMessage``
        came): it survives a later cut (the CLI keeps it and asks the model to resume), and
        so do the events held for the message so far. ``text``: the block as the message
        has it, the truth: what streamed since the mark is replaced if it differs."""
        if self._mark is None:
            return
        if text is not None and self.text[self._mark:] != text:
            self._text[:] = [self.text[: self._mark]]
            call_hook(self.view, "message_dropped")
            self.add_text(text)
        self._mark = len(self.text)
        call_hook(self.view, "message_started")  # (the view marks the same place)
        self._log_held()

    def message_ended(self) -> None:
        """The streamed message is complete (``message_delta``): the events held for it
        (:meth:`hold`) are logged now."""
        self._mark = None
        self._log_held()

    def hold(self, event: Any) -> None:
        """Log ``event`` once the message streaming now is complete (a cut one is sent again,
        and its thinking would be logged twice); at once if no message is open."""
        self._held.append(event)
        if self._mark is None:
            self._log_held()

    def _log_held(self) -> None:
        held, self._held = self._held, []
        for event in held:
            self.session.emit(event)

    def drop_unfinished(self) -> bool:
        """Forget the text of a message that started and never ended (a cut stream), here
        and in the view (its ``message_dropped`` hook). True if there was one."""
        mark, self._mark = self._mark, None
        self._held.clear()
        if mark is None:
            return False
        self._text[:] = [self.text[:mark]] if mark else []
        call_hook(self.view, "message_dropped")
        return True

    def was_streamed(self, message_id: str | None) -> bool:
        return message_id is not None and message_id in self._streamed

    def add_text(self, text: str) -> None:
        self._text.append(text)
        self.view.text(text)

    def tool_called(self, tool_use_id: str, name: str) -> None:
        self._tools[tool_use_id] = name

    def tool_name(self, tool_use_id: str) -> str | None:
        return self._tools.get(tool_use_id)

    def changed_file(self, path: str) -> None:
        if path not in self.files:
            self.files.append(path)

    async def rewind(self, *, dry_run: bool = False) -> Any:
        """Put the files back as they were before this turn (and so undo every later turn's
        Write/Edit changes too); ``dry_run``: only say which files would change. Returns a
        :class:`~plan_widgets.agent.rewind.RewindPlan`."""
        return await self.session.rewind(self, dry_run=dry_run)

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<Turn {self.number} of {self.session.name!r} {state}>"
