"""Calling the user's code (a ``repr``) under a time budget, without blocking the event loop.

The call runs in a thread of its own while the kernel's loop awaits its result. Past the
budget the caller gets "timed out" at once, and the thread is sent an asynchronous exception
(``PyThreadState_SetAsyncExc``), which stops a Python-level loop at its next bytecode.
Measured (docs/notebook-context.md): a ``while True: pass`` repr stops within the budget and
the loop lags at most a few tens of milliseconds; a repr blocked in a C call that releases
the GIL (``time.sleep``, I/O) keeps its thread until the call returns, but the loop goes on;
a C call that holds the GIL for seconds (``sum(range(10**9))``) cannot be bounded by any
in-process means (a signal handler waits for the same bytecode boundary) and stalls the
kernel until it returns. A thread still stuck counts against :data:`MAX_STUCK`: past it, no
more user code is called until they end.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)
MAX_STUCK = 4
"""Threads still running past their budget before calls are refused."""
_stuck: list[threading.Thread] = []


class BudgetExceeded(BaseException):
    """Raised inside a call's thread when its budget ran out (a BaseException, so the user's
    ``except Exception`` does not swallow it)."""


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    refused: str | None = None


def stuck() -> int:
    """Calls still running past their budget."""
    _stuck[:] = [t for t in _stuck if t.is_alive()]
    return len(_stuck)


async def call(fn: Callable[[], Any], seconds: float) -> Outcome:
    """``fn()`` in a thread, awaited for at most ``seconds``."""
    if stuck() >= MAX_STUCK:
        return Outcome(refused=f"{len(_stuck)} earlier calls are still stuck past their time "
                       "bound; no more of the user's code is called until they end")
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Outcome] = loop.create_future()
    lock = threading.Lock()
    finished = False

    def deliver(outcome: Outcome) -> None:
        if not done.done():
            done.set_result(outcome)

    def target() -> None:
        nonlocal finished
        try:  # the budget's exception may land anywhere in here, and is caught
            try:
                outcome = Outcome(value=fn())
            except BaseException as e:  # noqa: BLE001 - reported to the caller
                outcome = Outcome(error=e)
            finally:
                with lock:
                    finished = True
            loop.call_soon_threadsafe(deliver, outcome)
        except BaseException:  # noqa: BLE001 - the budget ran out: the caller knows already
            log.debug("a call ended past its budget", exc_info=True)

    thread = threading.Thread(target=target, name="plan_widgets-budget", daemon=True)
    thread.start()
    def stop() -> None:
        with lock:
            if not finished and thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread.ident), ctypes.py_object(BudgetExceeded))
                _stuck.append(thread)

    try:
        return await asyncio.wait_for(asyncio.shield(done), seconds)
    except asyncio.TimeoutError:
        stop()
        return Outcome(timed_out=True)
    except asyncio.CancelledError:  # the caller gave up (the turn was interrupted): so do we
        stop()
        raise
