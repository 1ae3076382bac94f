"""Background tasks on the kernel's loop, held until done (the loop keeps only weak
references) and with their exceptions retrieved (never "exception was never retrieved")."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

_running: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, Any], name: str | None = None) -> asyncio.Task[Any]:
    """Run ``coro`` in the background on the running loop; its failure is dropped quietly
    (callers report what the user must see themselves)."""
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _running.add(task)
    task.add_done_callback(_done)
    return task


def _done(task: asyncio.Task[Any]) -> None:
    _running.discard(task)
    if not task.cancelled():
        task.exception()
