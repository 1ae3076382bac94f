"""Reading a kernel's namespace for the agent: bounded, filtered, secrets redacted.

Pure functions over a namespace (a dict) and values: nothing here imports IPython, pandas,
numpy or polars (a library counts only if the user's code imported it already), so they are
tested without a kernel (``tests/test_inspection.py``).

Two levels of trust:

- :func:`list_variables` and :func:`short_repr` never run the user's code: builtin values are
  shown with their own bounded repr, known data types (DataFrame, Series, ndarray) by their
  shape, anything else by its type alone. They run on the kernel's event loop (1,000 variables
  in a few milliseconds; ``python -m benchmarks``, figure 6).
- :func:`plan_widgets.ipython.kernel.describe.inspect_value` calls the value's own code (``repr``,
  pandas' ``head``, ...), so the kernel tools run it in a thread under a time budget
  (:mod:`plan_widgets.ipython.kernel.budget`).

Every text that leaves here went through the event log's redaction rules
(:func:`plan_widgets.store.redact.redact_text`), and a variable whose name looks like a secret
(``API_KEY``, ``github_token``, ``password``) never shows its value.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import sys
import types
from collections.abc import Container, Mapping, Sequence
from typing import Any

from ...store.redact import REDACTED, redact_text, sensitive_key

log = logging.getLogger(__name__)

MAX_OUTPUT = 20_000
"""Characters of one tool result at most (the issue's "about 20 KB")."""
LIST_LIMIT = 200
"""Variables listed at most by default (the model may ask for up to :data:`LIST_MAX`)."""
LIST_MAX = 1000
REPR_CHARS = 80
"""Characters of a value's short repr in the listing."""
CELL_CHARS = 1500
"""Characters of one history cell at most."""

IPYTHON_NAMES = frozenset({
    "In", "Out", "exit", "quit", "get_ipython", "_", "__", "___", "_i", "_ii",
    "_iii", "_ih", "_oh", "_dh", "_sh",
})
_HISTORY_NAME = re.compile(r"_i?\d+|_i+")
_SCALARS = (bool, int, float, complex, type(None))
_PLAIN = frozenset({bool, int, float, complex, type(None), str, bytes, bytearray, list, tuple,
                    dict, set, frozenset, range})
SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range)
_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
              types.BuiltinMethodType, types.WrapperDescriptorType)


def secret_name(name: str) -> bool:
    """Whether a variable's name looks like a secret (the event log's rules for keys)."""
    return sensitive_key(name)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:max(limit - 40, 0)] + f"… [{len(text) - limit + 40:,} more characters]"


def finish(text: str, limit: int = MAX_OUTPUT) -> str:
    """A tool result: secrets redacted, then bounded."""
    return clip(redact_text(text), limit)


def imported(name: str) -> Any:
    """A library the user's code has imported already (never imported here)."""
    return sys.modules.get(name)


_KNOWN = (("pandas", "DataFrame", "DataFrame"), ("pandas", "Series", "Series"),
          ("numpy", "ndarray", "ndarray"), ("polars", "DataFrame", "polars.DataFrame"),
          ("polars", "Series", "polars.Series"))


def data_kind(value: Any) -> str | None:
    """``DataFrame``, ``Series``, ``ndarray``, ``polars.DataFrame`` or ``polars.Series`` for
    the data types the tools know, subclasses too (a library counts only if it is imported
    already: none is imported here), else None."""
    if type(value) in _PLAIN:
        return None
    for lib, cls, kind in _KNOWN:
        mod = imported(lib)
        if mod is not None and isinstance(value, getattr(mod, cls, ())):
            return kind
    return None


def type_name(value: Any) -> str:
    t = type(value)
    mod = str(getattr(t, "__module__", "") or "")
    name = str(getattr(t, "__qualname__", t.__name__))
    return name if mod in ("builtins", "__main__", "") else f"{mod.split('.')[0]}.{name}"


def size_of(value: Any) -> str:
    """Shape or length, for builtin containers and the known data types (no user code)."""
    kind = data_kind(value)
    try:
        if kind is not None:
            return "x".join(str(n) for n in value.shape)
        if type(value) in SIZED:
            return f"len {len(value):,}"
    except Exception:  # a broken object of a known library: no size, no failure
        log.debug("no size for %s", type(value), exc_info=True)
        return ""
    return ""


def _repr_int(value: int) -> str:
    if value.bit_length() > 256:  # a huge int: repr is slow, and refused above 4,300 digits
        return f"<int of {value.bit_length():,} bits>"
    return repr(value)


def short_repr(value: Any, limit: int = REPR_CHARS, _depth: int = 0) -> str:
    """A short repr that never runs the user's code: builtins by value (bounded), the known
    data types by shape, anything else by its type."""
    t = type(value)
    if t is int or t is bool:
        return clip(_repr_int(value), limit)
    if t in _SCALARS:
        return clip(repr(value), limit)
    if t is str or t is bytes or t is bytearray:
        head = value[: limit + 1]
        text = repr(head)
        return clip(text, limit) if len(value) <= limit else text[: limit - 1] + "…"
    if t in (list, tuple, set, frozenset) or t is dict:
        if _depth >= 2:
            return f"{t.__name__}(len {len(value):,})"
        items: list[str] = []
        used = 2
        n = 0
        for x in (value.items() if t is dict else value):
            if n >= 10 or used > limit:
                items.append("…")
                break
            if t is dict:
                k, v = x
                part = (f"{short_repr(k, 30, _depth + 1)}: "
                        + (repr(REDACTED) if isinstance(k, str) and secret_name(k)
                           else short_repr(v, 40, _depth + 1)))
            else:
                part = short_repr(x, 40, _depth + 1)
            items.append(part)
            used += len(part) + 2
            n += 1
        body = ", ".join(items)
        if t is list:
            text = f"[{body}]"
        elif t is tuple:
            text = f"({body}{',' if len(value) == 1 else ''})"
        elif t is dict:
            text = f"{{{body}}}"
        else:
            text = f"{t.__name__}({{{body}}})" if value else f"{t.__name__}()"
        return clip(text, limit)
    if t is range:
        return repr(value)
    kind = data_kind(value)
    if kind is not None:
        return _data_summary(value, kind, limit)
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__}>"
    if isinstance(value, _CALLABLES):
        return f"<{type(value).__name__} {getattr(value, '__qualname__', '?')}>"
    return f"<{type_name(value)} object>"


def _data_summary(value: Any, kind: str, limit: int) -> str:
    try:
        if kind in ("DataFrame", "polars.DataFrame"):
            cols = [label(c) for c in list(value.columns)[:12]]
            more = ", …" if len(value.columns) > 12 else ""
            return clip(f"columns: {', '.join(cols)}{more}", limit)
        return clip(f"dtype {value.dtype}", limit)
    except Exception:  # a broken object of a known library: its kind alone, no failure
        log.debug("no summary of a %s", kind, exc_info=True)
        return f"<{kind}>"


def label(column: Any) -> str:
    """A column's name as the model should read it: quoted, so that spaces and case show
    (``'Price '``), a non-string label as its short repr."""
    return repr(column) if isinstance(column, str) else short_repr(column, 40)


def listed(name: str, value: Any, hidden: Container[str] = ()) -> bool:
    """Whether the listing shows ``name``: not private, not IPython's own, not a module, not
    a function or class from a library, not hidden by the kernel."""
    if name.startswith("_") or name in IPYTHON_NAMES or name in hidden:
        return False
    if _HISTORY_NAME.fullmatch(name):
        return False
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, _CALLABLES):
        return getattr(value, "__module__", None) == "__main__"
    return True


def list_variables(ns: Mapping[str, Any], hidden: Container[str] = (), *,
                   pattern: str | None = None, limit: int = LIST_LIMIT) -> str:
    """The user's variables as a text table: name, type, shape or length, short value.

    ``pattern``: a glob (``df*``) or a plain substring; ``limit``: rows at most (up to
    :data:`LIST_MAX`). Runs none of the user's code."""
    limit = max(1, min(int(limit), LIST_MAX))
    rows: list[tuple[str, str, str, str]] = []
    matched = 0
    used = 0  # rows stop at the output bound too: no work for rows that would be cut off
    glob = pattern is not None and any(ch in pattern for ch in "*?[")
    for name, value in list(ns.items()):
        if not isinstance(name, str) or not listed(name, value, hidden):
            continue
        if pattern and not (fnmatch.fnmatchcase(name, pattern) if glob else pattern in name):
            continue
        matched += 1
        if len(rows) >= limit or used > MAX_OUTPUT - 400:
            continue
        shown = REDACTED if secret_name(name) else short_repr(value)
        row = (name, type_name(value), size_of(value), shown)
        used += sum(map(len, row)) + 12
        rows.append(row)
    if not rows:
        what = f" matching {pattern!r}" if pattern else ""
        return f"No user variables{what} in the kernel."
    widths = [min(max(len(r[i]) for r in rows), cap) for i, cap in ((0, 32), (1, 28), (2, 16))]
    lines = [f"{'name':<{widths[0]}}  {'type':<{widths[1]}}  {'size':<{widths[2]}}  value"]
    for r in rows:
        lines.append(f"{clip(r[0], 32):<{widths[0]}}  {clip(r[1], 28):<{widths[1]}}  "
                     f"{r[2]:<{widths[2]}}  {r[3]}")
    head = f"{matched} variable{'s' if matched != 1 else ''}"
    if matched > len(rows):
        why = "raise limit" if len(rows) >= limit else "the output is bounded"
        head += f" (showing {len(rows)}; narrow with pattern, or {why})"
    return finish(head + ":\n" + "\n".join(lines))


# -- the notebook's history ------------------------------------------------------------------

def format_history(inputs: Sequence[str], outputs: Mapping[int, Any], *, last: int = 20,
                   notebook: str | None = None) -> str:
    """The last ``last`` cells run in this kernel, with their results (short reprs: no user
    code runs), each bounded; and the notebook's path if known."""
    last = max(1, min(int(last), 200))
    lines = [f"Notebook: {notebook}" if notebook else
             "Notebook: unknown (the frontend did not say which file this kernel runs)"]
    n = len(inputs)
    first = max(1, n - last)
    if n <= 1:
        lines.append("No cells have run yet.")
    else:
        lines.append(f"Cells {first}-{n - 1} of {n - 1} run in this kernel:")
    for i in range(first, n):
        src = str(inputs[i]).rstrip()
        lines.append(f"\nIn [{i}]:\n{clip(src, CELL_CHARS)}")
        if i in outputs:
            lines.append(f"Out[{i}]: {short_repr(outputs[i], 300)}")
    text = "\n".join(lines)
    if len(text) > MAX_OUTPUT:  # keep the newest cells: cut from the front
        text = "… (older cells left out)\n" + text[-(MAX_OUTPUT - 40):]
    return finish(text)
