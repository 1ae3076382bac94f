"""One variable in depth, for ``inspect_variable``: a DataFrame's shape, dtypes, head and null
counts, an array's statistics, any object's bounded repr.

Unlike :mod:`plan_widgets.ipython.kernel.inspection` this runs the value's own code (``repr``,
pandas' ``head``), so the kernel tools call it in a thread under a time budget
(:mod:`plan_widgets.ipython.kernel.budget`). Every section that raises is reported as such, every
section is bounded, and the result goes through the event log's redaction rules.
"""

from __future__ import annotations

import reprlib
import time
from collections.abc import Sequence
from typing import Any

from ...store.redact import REDACTED
from .inspection import (
    SIZED,
    clip,
    data_kind,
    finish,
    imported,
    label,
    secret_name,
    size_of,
    type_name,
)

DESCRIBE_CELLS = 500_000
"""``describe()`` only below this many cells (rows x columns): about 10 ms at the bound,
while it takes a second on 10 million rows (it sorts for the percentiles)."""
NULL_COUNT_SECONDS = 0.05
"""Null counts go column by column and stop after this long (about 30 ms for four numeric
columns of 10 million rows; an object column costs four times as much)."""
ARRAY_STATS = 20_000_000
"""ndarray min/max/mean only up to this many elements (about 30 ms at the bound)."""
HEAD_ROWS = 5
MAX_COLUMNS = 40
"""Columns shown in dtypes, head and null counts at most."""


def _part(title: str, fn: Any, limit: int = 6000) -> str:
    """One section of an inspection; a section that raises says so (the rest still shows)."""
    try:
        body = str(fn())
    except Exception as e:
        body = f"(failed: {type(e).__name__}: {clip(str(e), 300)})"
    return f"{title}:\n{clip(body, limit)}"


def _frame_text(df: Any, pd: Any, max_rows: int = HEAD_ROWS + 2) -> str:
    with pd.option_context("display.width", 200, "display.max_colwidth", 40):
        return str(df.to_string(max_cols=20, max_rows=max_rows))


def _null_counts(columns: Sequence[Any], count: Any) -> str:
    out = []
    deadline = time.perf_counter() + NULL_COUNT_SECONDS
    for i, c in enumerate(columns[:MAX_COLUMNS]):
        if time.perf_counter() > deadline:
            out.append(f"(stopped at the time bound: {len(columns) - i} columns not counted)")
            break
        out.append(f"{label(c)}: {count(c):,}")
    if len(columns) > MAX_COLUMNS:
        out.append(f"… {len(columns) - MAX_COLUMNS} more columns")
    return "\n".join(out)


def _pandas_frame(df: Any) -> list[str]:
    pd = imported("pandas")
    rows, cols = df.shape
    parts = [f"shape: {rows:,} rows x {cols:,} columns",
             _part("dtypes", lambda: "\n".join(
                 f"{label(c)}: {t}" for c, t in list(df.dtypes.items())[:MAX_COLUMNS])
                 + (f"\n… {cols - MAX_COLUMNS} more columns" if cols > MAX_COLUMNS else "")),
             _part(f"head({HEAD_ROWS})", lambda: _frame_text(df.head(HEAD_ROWS), pd)),
             _part("null counts", lambda: _null_counts(
                 list(df.columns), lambda c: int(df[c].isna().sum())))]
    if rows * max(cols, 1) <= DESCRIBE_CELLS:
        parts.append(_part("describe()", lambda: _frame_text(df.describe(), pd, 20)))
    else:
        parts.append(f"describe(): left out ({rows * cols:,} cells; computed only below "
                     f"{DESCRIBE_CELLS:,}; run it with the run-code tool if needed)")
    return parts


def _pandas_series(s: Any) -> list[str]:
    pd = imported("pandas")
    n = len(s)
    parts = [f"length: {n:,}", f"dtype: {s.dtype}", f"name: {s.name!r}",
             _part(f"head({HEAD_ROWS})", lambda: s.head(HEAD_ROWS).to_string()),
             _part("null count", lambda: f"{int(s.isna().sum()):,}")]
    if n <= DESCRIBE_CELLS:
        parts.append(_part("describe()", lambda: _frame_text(s.describe().to_frame(), pd,
                                                             20)))
    else:
        parts.append(f"describe(): left out ({n:,} values; computed only below "
                     f"{DESCRIBE_CELLS:,})")
    return parts


def _polars_frame(df: Any) -> list[str]:
    rows, cols = df.shape
    parts = [f"shape: {rows:,} rows x {cols:,} columns",
             _part("schema", lambda: "\n".join(
                 f"{label(c)}: {t}" for c, t in list(df.schema.items())[:MAX_COLUMNS])),
             _part(f"head({HEAD_ROWS})", lambda: str(df.head(HEAD_ROWS))),
             _part("null counts", lambda: str(df.null_count()))]
    if rows * max(cols, 1) <= DESCRIBE_CELLS:
        parts.append(_part("describe()", lambda: str(df.describe())))
    else:
        parts.append(f"describe(): left out ({rows * cols:,} cells)")
    return parts


def _polars_series(s: Any) -> list[str]:
    return [f"length: {len(s):,}", f"dtype: {s.dtype}", f"name: {s.name!r}",
            _part(f"head({HEAD_ROWS})", lambda: str(s.head(HEAD_ROWS))),
            _part("null count", lambda: f"{s.null_count():,}")]


def _ndarray(a: Any) -> list[str]:
    np = imported("numpy")
    parts = [f"shape: {a.shape}", f"dtype: {a.dtype}", f"size: {a.size:,} ({a.nbytes:,} bytes)"]
    numeric = np is not None and (np.issubdtype(a.dtype, np.number)
                                  or np.issubdtype(a.dtype, np.bool_))
    if numeric and 0 < a.size <= ARRAY_STATS:
        parts.append(_part("min / max / mean", lambda: (
            f"{a.min()} / {a.max()} / {a.mean()}")))
    elif numeric and a.size:
        parts.append(f"min / max / mean: left out ({a.size:,} elements; computed only up to "
                     f"{ARRAY_STATS:,})")
    if np is not None:
        parts.append(_part("values", lambda: np.array2string(
            a, threshold=100, edgeitems=3, max_line_width=120)))
    return parts


_REPR = reprlib.Repr()
_REPR.maxstring = 2000
_REPR.maxother = 4000
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 30
_REPR.maxlevel = 3


def _other(value: Any) -> list[str]:
    parts = []
    if type(value) in SIZED:
        parts.append(f"length: {len(value):,}")
    # reprlib bounds builtin containers; for anything else it would hide a failing repr
    parts.append(_part("repr", lambda: _REPR.repr(value) if type(value) in SIZED
                       else clip(repr(value), _REPR.maxother)))
    doc = None if type(value).__module__ == "builtins" else getattr(type(value), "__doc__", None)
    if isinstance(doc, str) and doc.strip():
        parts.append(f"type's doc: {clip(' '.join(doc.split()), 300)}")
    return parts


_KINDS = {"DataFrame": _pandas_frame, "Series": _pandas_series, "ndarray": _ndarray,
          "polars.DataFrame": _polars_frame, "polars.Series": _polars_series}


def inspect_value(name: str, value: Any) -> str:
    """A bounded description of one variable (runs the value's own code: see module doc)."""
    # "name (type)": a "NAME: value" header would read as an assignment to the redaction rules
    head = f"{name} ({type_name(value)})"
    if secret_name(name):
        size = size_of(value)
        return finish(f"{head}{f', {size}' if size else ''}\nvalue: {REDACTED} (the name looks "
                      "like a secret; its value is never shown)")
    kind = data_kind(value)
    try:
        parts = _KINDS[kind](value) if kind is not None else _other(value)
    except Exception as e:  # a broken object: say what failed, never raise
        parts = [f"(inspection failed: {type(e).__name__}: {clip(str(e), 300)})"]
    return finish("\n".join([head, *parts]))
