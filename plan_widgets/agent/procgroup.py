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
from collections.abc import Iterator
from typing import Any

_OWN_GROUP: contextvars.ContextVar[bool] = contextvars.ContextVar("pw_own_group", default=False)


class _AnyioProxy:
    """``anyio`` with an ``open_process`` that can start the child in its own session."""

    def __init__(self, real: Any) -> None:
        self._pw_real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pw_real, name)

    async def open_process(self, *args: Any, **kwargs: Any) -> Any:
        if _OWN_GROUP.get():
            kwargs.setdefault("start_new_session", True)
        return await self._pw_real.open_process(*args, **kwargs)


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
def own_process_group(subprocess_cli: Any) -> Iterator[None]:
    """Within this block, a CLI started by this task runs in its own process group.

    ``subprocess_cli`` is the SDK's transport module (None if its layout changed: then nothing
    is patched)."""
    _install(subprocess_cli)
    token = _OWN_GROUP.set(True)
    try:
        yield
    finally:
        _OWN_GROUP.reset(token)
