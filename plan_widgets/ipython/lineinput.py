"""One line typed at the terminal, read without blocking the event loop, and given up on.

A decision asked at the prompt can end without an answer (it expires, the turn is
interrupted, the session closes). ``input()`` cannot be stopped once it waits: its thread went
on waiting after the decision had ended, and took the first line typed at IPython's next
prompt (an extra Enter was needed, and the thread stayed). So the line is read here in a
thread of its own that waits on the terminal and on a pipe at once (``select``): writing to
the pipe ends the wait, and the thread with it. The terminal stays in its ordinary line mode
(echo, erase), as with ``input()``.

Where the terminal cannot be waited on that way (Windows, a stdin with no file descriptor),
:func:`read_line` falls back to ``input()`` in a thread, as before.
"""

from __future__ import annotations

import asyncio
import os
import select
import sys
import threading
from typing import Any

THREAD_NAME = "plan_widgets-input"


def _stdin_fd() -> int | None:
    """The terminal's file descriptor, if a thread can wait on it with ``select``."""
    if os.name != "posix":
        return None
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd


_pending = bytearray()
"""What was read past the line returned: the next lines, when several came in one read (piped
or pasted input). Without it they were dropped: a decision asked twice in a row (a comment's
line, then its text) got EOF from a pipe (issue 22's terminal test)."""


def _wait_for_line(fd: int, stop_fd: int) -> str | None:
    """A line from ``fd`` (without its newline), or None once ``stop_fd`` is readable."""
    while b"\n" not in _pending:
        ready, _, _ = select.select([fd, stop_fd], [], [])
        if stop_fd in ready:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            if not _pending:
                raise EOFError
            break
        _pending.extend(chunk)
    line, _sep, rest = bytes(_pending).partition(b"\n")
    _pending[:] = rest
    return line.rstrip(b"\r").decode(
        getattr(sys.stdin, "encoding", None) or "utf-8", errors="replace")


async def read_line(prompt: str, stop: asyncio.Event) -> str | None:
    """The next line typed after ``prompt``; None if ``stop`` is set first (the reading thread
    then ends too). Raises EOFError when the input has ended."""
    fd = _stdin_fd()
    if fd is None:
        return await _read_with_input(prompt, stop)
    loop = asyncio.get_running_loop()
    got: asyncio.Future[str | None] = loop.create_future()
    stop_r, stop_w = os.pipe()

    def settle(fn: Any, value: Any) -> None:
        if not got.done():
            fn(value)

    def work() -> None:
        try:
            line = _wait_for_line(fd, stop_r)
        except BaseException as e:  # noqa: BLE001 - handed to the loop
            loop.call_soon_threadsafe(settle, got.set_exception, e)
        else:
            loop.call_soon_threadsafe(settle, got.set_result, line)
        finally:
            os.close(stop_r)

    sys.stdout.write(prompt)
    sys.stdout.flush()
    thread = threading.Thread(target=work, name=THREAD_NAME, daemon=True)
    thread.start()
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([got, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        try:
            os.write(stop_w, b"x")  # the thread stops waiting (if it still does)
        except OSError:
            pass
        os.close(stop_w)
    # not done: the thread ends by itself at once (the pipe is readable), reading nothing
    return got.result() if got.done() else None


async def _read_with_input(prompt: str, stop: asyncio.Event) -> str | None:
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.run_in_executor(None, input, prompt)
    stopped: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([line, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    return line.result() if line.done() else None
