"""Keep the kernel's interrupt away from the Claude Code CLI.

Jupyter interrupts a kernel by sending SIGINT to its whole process group (jupyter_client's
``LocalProvisioner.send_signal``), so a CLI started by the kernel died with it (measured: the
session was dead after the stop button). The interrupt must stop the turn, not the process:
the CLI is started in a session of its own, and the kernel then interrupts it over the SDK.

The SDK has no option for that; its transport calls ``anyio.open_process`` through its module's
``anyio`` name. :func:`own_process_group` swaps that name for a thin proxy that adds
``start_new_session=True`` while a session of ours connects (a context variable, so other users
of the SDK in the same kernel are untouched). If the SDK's layout changes, nothing is patched
and the CLI simply starts as before.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

_OWN_GROUP: contextvars.ContextVar[bool] = contextvars.ContextVar("pw_own_group", default=False)
_ON_SPAWN: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar(
    "pw_on_spawn", default=None)


class _AnyioProxy:
    """``anyio`` with an ``open_process`` that can start the child in its own session."""

    def __init__(self, real: Any) -> None:
        self._pw_real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pw_real, name)

    async def open_process(self, *args: Any, **kwargs: Any) -> Any:
        if _OWN_GROUP.get():
            kwargs.setdefault("start_new_session", True)
        process = await self._pw_real.open_process(*args, **kwargs)
        on_spawn = _ON_SPAWN.get()
        if on_spawn is not None:
            on_spawn(process)
        return process


def _install(subprocess_cli: Any) -> bool:
    if subprocess_cli is None:
        return False
    current = getattr(subprocess_cli, "anyio", None)
    if current is None:
        return False
    if not isinstance(current, _AnyioProxy):
        subprocess_cli.anyio = _AnyioProxy(current)
    return True


@contextlib.contextmanager
def own_process_group(subprocess_cli: Any,
                      on_spawn: Callable[[Any], None] | None = None) -> Iterator[None]:
    """Within this block, a CLI started by this task runs in its own process group, and
    ``on_spawn(process)`` is told about it (the SDK forgets its process when a start fails, so
    its exit code would be lost).

    ``subprocess_cli`` is the SDK's transport module (None if its layout changed: then nothing
    is patched)."""
    _install(subprocess_cli)
    token = _OWN_GROUP.set(True)
    spawn_token = _ON_SPAWN.set(on_spawn)
    try:
        yield
    finally:
        _ON_SPAWN.reset(spawn_token)
        _OWN_GROUP.reset(token)
