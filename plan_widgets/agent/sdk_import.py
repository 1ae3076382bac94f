"""Importing the SDK without compiling a grammar that nothing here uses.

``claude_agent_sdk`` imports ``jsonschema`` (through ``mcp`` and for its own tools), and
``jsonschema``'s format checkers import ``rfc3987_syntax`` where it is installed: every
JupyterLab environment has it (``nbformat`` and ``jupyter_events`` ask for
``jsonschema[format-nongpl]``). ``rfc3987_syntax`` compiles about 35 Earley parsers at import,
for the ``iri`` formats alone. Measured with ``python -X importtime -c "import
claude_agent_sdk"`` (SDK 0.2.190, jsonschema 4.26.0, 2 cores, 2026-12-07): 2.43 s, of which
``rfc3987_syntax`` 1.51 s; 3.2 s of CPU in all. A kernel pays it at its first session, and the
test suite in every kernel it starts (python-jsonschema/jsonschema#1428, open upstream).

While the SDK is imported, :func:`deferring_iri_grammar` puts a stand-in for
``rfc3987_syntax`` in ``sys.modules``: ``jsonschema`` takes its ``is_valid_syntax``, which loads
the real module at its first call and answers as it does. Then the stand-in leaves
``sys.modules``, so a later ``import rfc3987_syntax`` gets the real module. What changes is only
when the grammar is compiled: at the first ``iri`` check, never for most kernels. Where
``jsonschema`` was imported already, or ``rfc3987_syntax`` is not installed, nothing is done.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

_NAME = "rfc3987_syntax"
_lock = threading.Lock()
_real: types.ModuleType | None = None


def _real_module() -> types.ModuleType:
    """The real ``rfc3987_syntax``, imported at the first use, once the stand-in is gone."""
    global _real
    with _lock:
        if _real is None:
            current = sys.modules.get(_NAME)
            if current is not None and getattr(current, "_plan_widgets_stand_in", False):
                raise ImportError(f"{_NAME} is used while claude_agent_sdk is imported")
            _real = importlib.import_module(_NAME)
        return _real


def _stand_in() -> types.ModuleType:
    module = types.ModuleType(_NAME, "Imports the real rfc3987_syntax at its first use "
                                     "(plan_widgets.agent.sdk_import).")

    def is_valid_syntax(term: str, value: str) -> bool:
        return bool(_real_module().is_valid_syntax(term, value))

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # (the import system's questions: __path__, __spec__, ...)
            raise AttributeError(name)
        return getattr(_real_module(), name)

    module.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module._plan_widgets_stand_in = True  # type: ignore[attr-defined]
    return module


@contextlib.contextmanager
def deferring_iri_grammar() -> Iterator[None]:
    """Within: ``import rfc3987_syntax`` gives the stand-in (see the module's docstring)."""
    if "jsonschema._format" in sys.modules or _NAME in sys.modules:
        yield
        return
    if importlib.util.find_spec(_NAME) is None:
        yield
        return
    stand_in = _stand_in()
    sys.modules[_NAME] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(_NAME) is stand_in:
            del sys.modules[_NAME]


def internal(module: str, name: str | None = None) -> Any:
    """A module of the SDK's internals (or one of its names), None if its layout changed."""
    try:
        found = importlib.import_module(module)
        return found if name is None else getattr(found, name)
    except (ImportError, AttributeError):  # pragma: no cover
        return None
