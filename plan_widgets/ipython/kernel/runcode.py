"""Running the agent's code in the user's namespace (the ``run_code`` kernel tool).

The code runs on the kernel's main thread, as a cell would: it may use the namespace, print,
display, and block the loop while it runs (as a cell does). Its stdout, stderr, displays, the
last expression's value and any traceback come back to the model, each bounded. The kernel's
stop button interrupts it: ipykernel ignores SIGINT between cells, and while an async cell
waits its handler only schedules that cell's cancellation, so for the run the default handler
is installed and the stop button raises KeyboardInterrupt inside the code.

A top-level ``await`` is allowed, as in a cell: the code is compiled as IPython compiles a cell
(``PyCF_ALLOW_TOP_LEVEL_AWAIT``) and, when that makes a coroutine, awaited as a task on the
kernel's own loop, which goes on serving the kernel meanwhile; the stop button then cancels
it (tests/test_e2e_kernel_tools.py). Before, such code was refused with "SyntaxError: 'await'
outside function".
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import itertools
import linecache
import signal
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from .inspection import clip, finish, type_name

STDOUT_CHARS = 8000
STDERR_CHARS = 4000
RESULT_CHARS = 4000
TRACEBACK_CHARS = 6000
INTERRUPTED = ("Interrupted by the user (the kernel's stop button): the code stopped part "
               "way; the namespace may hold partial changes.")


class _Bounded(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        s = str(s)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(len(s), room)
        self.dropped += max(len(s) - max(room, 0), 0)
        return len(s)

    def text(self) -> str | None:
        if not (self.kept or self.dropped):
            return None
        out = "".join(self.parts)
        return out + (f"… [{self.dropped:,} more characters]" if self.dropped else "")


@dataclass
class _Run:
    """What one run left: its streams, displays, value, failure."""

    out: _Bounded = field(default_factory=lambda: _Bounded(STDOUT_CHARS))
    err: _Bounded = field(default_factory=lambda: _Bounded(STDERR_CHARS))
    displays: Any = None
    result: Any = None
    failure: str = ""
    stopped: bool = False

    def report(self) -> str:
        parts = [INTERRUPTED] if self.stopped else []
        for title, stream in (("stdout", self.out), ("stderr", self.err)):
            text = stream.text()
            if text is not None:
                parts.append(f"{title}:\n{text}")
        for d in getattr(self.displays, "outputs", None) or []:
            data = getattr(d, "data", None) or {}
            plain = clip(str(data.get("text/plain", "")), 2000)
            parts.append(f"display ({', '.join(sorted(data))}):\n{plain}")
        if self.result is not None:
            try:
                shown = clip(repr(self.result), RESULT_CHARS)
            except Exception as e:
                shown = f"(its repr raised {type(e).__name__}: {clip(str(e), 300)})"
            parts.append(f"result ({type_name(self.result)}):\n{shown}")
        if self.failure:
            f = self.failure
            parts.append("error:\n" + (f if len(f) <= TRACEBACK_CHARS
                                         else "…" + f[-TRACEBACK_CHARS:]))
        return finish("\n\n".join(parts or ["Done (no output, no result)."]))


_runs = itertools.count(1)


def _sigint(handler: Any) -> Any:
    """Install ``handler`` for SIGINT (on the main thread only); returns the one it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


def _compile(tree: ast.Module, last: ast.Expr | None,
             filename: str) -> tuple[CodeType, CodeType | None]:
    """The body and the last expression, compiled as IPython compiles a cell: a top-level
    ``await`` (``async for``, ``async with``) makes a coroutine's code instead of a
    SyntaxError (``PyCF_ALLOW_TOP_LEVEL_AWAIT``, what ``run_cell_async`` uses)."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    value = None if last is None else compile(ast.Expression(last.value), filename, "eval",
                                              flags=flags, dont_inherit=True)
    return body, value


async def _run(run: _Run, code: CodeType, ns: dict[str, Any]) -> Any:
    """Run ``code`` (its value, for an expression). Code with a top-level ``await`` runs as a
    task on the kernel's own loop, awaited here: the loop goes on serving the kernel meanwhile
    (never a nested loop), and the stop button cancels the task, as it cancels a waiting cell
    (at its next ``await``: KeyboardInterrupt raised into a running loop would end the loop)."""
    if not code.co_flags & inspect.CO_COROUTINE:
        return eval(code, ns)  # noqa: S307 - the user approved it (exec code: None)
    loop = asyncio.get_running_loop()
    task = loop.create_task(eval(code, ns))  # noqa: S307

    def stop(_signum: int, _frame: Any) -> None:
        run.stopped = True
        loop.call_soon_threadsafe(task.cancel)

    previous = _sigint(stop)
    try:
        return await task
    except asyncio.CancelledError:
        if not run.stopped:
            raise  # the turn itself was cancelled
        raise KeyboardInterrupt from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


async def _execute(run: _Run, body: CodeType, value: CodeType | None, ns: dict[str, Any],
                   capture_display: Any) -> None:
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(contextlib.redirect_stdout(run.out))
            stack.enter_context(contextlib.redirect_stderr(run.err))
            if capture_display is not None:
                run.displays = stack.enter_context(capture_display())
            await _run(run, body, ns)
            if value is not None:
                run.result = await _run(run, value, ns)
    except KeyboardInterrupt:
        run.stopped = True
    except asyncio.CancelledError:
        raise
    except BaseException as e:  # noqa: BLE001 - SystemExit too: the kernel must go on
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next  # the code's own frames only
        run.failure = "".join(traceback.format_exception(type(e), e, tb))


async def run_code(ns: dict[str, Any], code: str, *, capture_display: Any = None,
                   interrupted: Callable[[Any], None] | None = None) -> str:
    """Run ``code`` in ``ns`` as a cell would (a last expression's value is the result, a
    top-level ``await`` is awaited); the report of what it printed, displayed, returned or
    raised, bounded. ``interrupted`` is called with the SIGINT handler the run replaced when
    the stop button stopped it."""
    filename = f"<claude-run-{next(_runs)}>"
    try:
        tree = ast.parse(code, filename, "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        assert last is None or isinstance(last, ast.Expr)
        body, value = _compile(tree, last, filename)
    except SyntaxError as e:
        return finish("SyntaxError: " + "".join(traceback.format_exception_only(e)).strip()
                      + "\nNothing ran.")
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    run = _Run()
    previous = _sigint(signal.default_int_handler)
    try:
        await _execute(run, body, value, ns, capture_display)
    except KeyboardInterrupt:  # the stop button, just outside the code
        run.stopped = True
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if run.stopped and interrupted is not None:
        interrupted(previous)
    return run.report()
