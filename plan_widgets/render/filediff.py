"""A change to a file as a person reviews it: a unified diff with line numbers, a few lines of
context, the words that changed inside a changed line marked, long runs of changed lines
folded with their count, the whole bounded. As escaped HTML (a card, a static turn) and as
plain lines (the terminal, the Markdown fallback).

The line and word styles are the plan's Changes view's (:mod:`.diff`, from :mod:`.look`), so
both diffs look alike and follow the same theme. Both texts are untrusted (the file on disk,
the model's new content): everything is escaped here.

``difflib`` with ``autojunk=False`` finds the smallest diff, but it is quadratic on repetitive
lines (measured: 10,000 lines of two repeated values, swapped: 26 s; with autojunk 0.01 s), so
longer texts use difflib's own heuristic. A card is drawn on the kernel's loop, so only the
rows shown get a word diff, and the opcodes are computed once per card (measured, the whole
card's HTML: a 20,000-line file with one line changed 0.19 s, rewritten whole 1.1 s; 1,000
repetitive lines swapped 0.4 s exact; files over 256 KB are not diffed: agent/ondisk.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .diff import MAX_WORD_DIFF, _line, _lines, _word_pair
from .look import DIFF_ADD_LINE, DIFF_DEL_LINE
from .markdown import escape

CONTEXT = 3
"""Unchanged lines shown around a change."""
FOLD_AT = 40
"""A run of changed lines longer than this is folded after its first :data:`FOLD_KEEP`."""
FOLD_KEEP = 20
MAX_LINES = 400
"""Diff lines shown at most, folded ones included (the rest are counted)."""
EXACT_UP_TO = 1000
"""Texts of at most this many lines get difflib's exact diff (see the module's doc)."""


@dataclass(frozen=True)
class Row:
    """One line of the diff: ``sign`` is ``" "``, ``"-"``, ``"+"`` or ``"@"`` (a hunk's head);
    ``pair``: the line it replaces or is replaced by (its changed words are marked when it is
    drawn: only the rows shown cost a word diff)."""

    sign: str
    old: int | None
    new: int | None
    text: str
    pair: str | None = None

    @property
    def html(self) -> str:
        """The line as escaped HTML, its changed words marked."""
        if self.pair is None or len(self.text) + len(self.pair) > MAX_WORD_DIFF:
            return escape(self.text)
        if self.sign == "-":
            return _word_pair(self.text, self.pair)[0]
        return _word_pair(self.pair, self.text)[1]


def lines_of(text: str) -> list[str]:
    """A file's lines (no empty last line for a text that ends with a newline)."""
    lines = _lines(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _pairs(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> Iterator[Row]:
    """A replaced block: the changed lines paired in order (their words are marked), then the
    rest removed and added."""
    pairs = min(i2 - i1, j2 - j1)
    yield from (Row("-", k + 1, None, a[k], b[j1 + k - i1] if k - i1 < pairs else None)
                for k in range(i1, i2))
    yield from (Row("+", None, k + 1, b[k], a[i1 + k - j1] if k - j1 < pairs else None)
                for k in range(j1, j2))


@lru_cache(maxsize=4)
def _groups(old: str, new: str, context: int) -> tuple[list[str], list[str], list[Any]]:
    """The two texts' lines and difflib's grouped opcodes (drawn several times per card: its
    live form, its static copies, its fallback)."""
    a, b = lines_of(old), lines_of(new)
    exact = max(len(a), len(b)) <= EXACT_UP_TO
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=not exact)
    return a, b, list(matcher.get_grouped_opcodes(context))


def hunks(old: str, new: str, context: int = CONTEXT) -> list[list[Row]]:
    """The diff's hunks, each starting with its ``@@`` row."""
    a, b, groups = _groups(old, new, context)
    out = []
    for group in groups:
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        head = f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"
        rows = [Row("@", None, None, head)]
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                rows += [Row(" ", x1 + k + 1, y1 + k + 1, a[x1 + k]) for k in range(x2 - x1)]
            elif tag == "replace":
                rows += _pairs(a, b, x1, x2, y1, y2)
            elif tag == "delete":
                rows += [Row("-", k + 1, None, a[k]) for k in range(x1, x2)]
            else:
                rows += [Row("+", None, k + 1, b[k]) for k in range(y1, y2)]
        out.append(rows)
    return out


def _runs(rows: list[Row]) -> Iterator[list[Row]]:
    """The hunk's rows in runs: unchanged ones alone, changed ones together."""
    run: list[Row] = []
    for r in rows:
        if r.sign in "-+":
            run.append(r)
            continue
        if run:
            yield run
            run = []
        yield [r]
    if run:
        yield run


@dataclass
class _Budget:
    left: int = MAX_LINES
    hidden: int = 0

    def take(self, rows: list[Row]) -> list[Row]:
        shown = rows[:max(self.left, 0)]
        self.left -= len(shown)
        self.hidden += len(rows) - len(shown)
        return shown


def folded(hunk_list: list[list[Row]]) -> Iterator[tuple[list[Row], list[Row]]]:
    """Each run of rows as (shown, folded): a long run of changes keeps its first lines
    shown and the rest folded; what is past :data:`MAX_LINES` is neither (its count is
    :func:`hidden_count`'s)."""
    budget = _Budget()
    for rows in hunk_list:
        for run in _runs(rows):
            if len(run) > FOLD_AT:
                yield budget.take(run[:FOLD_KEEP]), budget.take(run[FOLD_KEEP:])
            else:
                yield budget.take(run), []


def count(rows: list[Row]) -> str:
    """A folded run's count: ``57 more lines (+50 −7)``."""
    add = sum(r.sign == "+" for r in rows)
    return f"{len(rows)} more lines (+{add} −{len(rows) - add})"


def stats(hunk_list: list[list[Row]]) -> tuple[int, int]:
    """Lines added and removed."""
    rows = [r for h in hunk_list for r in h]
    return sum(r.sign == "+" for r in rows), sum(r.sign == "-" for r in rows)


def _width(hunk_list: list[list[Row]]) -> int:
    return max((len(str(n)) for h in hunk_list for r in h for n in (r.old, r.new) if n),
               default=1)


def _num(n: int | None, width: int) -> str:
    return str(n).rjust(width) if n else " " * width


def _gutter(r: Row, width: int) -> str:
    """The line's numbers (old, new) and sign; ``width`` 0: the sign only (a text that is no
    file, such as an Edit's own strings, has no line numbers to give)."""
    if not width:
        return f"{r.sign} "
    return f"{_num(r.old, width)} {_num(r.new, width)} {r.sign} "


_STYLE = {"-": DIFF_DEL_LINE, "+": DIFF_ADD_LINE, " ": "", "@": "opacity:0.75;font-style:italic"}


def html_rows(rows: list[Row], width: int) -> str:
    return "".join(_line("" if r.sign == "@" else _gutter(r, width), _STYLE[r.sign], r.html)
                   for r in rows if width or r.sign != "@")


def file_diff_html(old: str, new: str, numbered: bool = True) -> str:
    """The change from ``old`` to ``new`` as an escaped ``<pre>`` (empty if no change);
    ``numbered=False``: without line numbers and hunk heads."""
    hl = hunks(old, new)
    if not hl:
        return ""
    width = _width(hl) if numbered else 0
    parts, total = [], sum(len(h) for h in hl)
    shown = 0
    for visible, fold in folded(hl):
        parts.append(html_rows(visible, width))
        shown += len(visible) + len(fold)
        if fold:
            parts.append(f'<details class="pw-diff-fold"><summary>… {escape(count(fold))}'
                         f"</summary>{html_rows(fold, width)}</details>")
    if total > shown:
        parts.append(_line("", "", escape(f"… {total - shown} more diff lines not shown")))
    return f'<pre class="pw-diff" style="white-space:pre-wrap">{"".join(parts)}</pre>'


def file_diff_text(old: str, new: str, limit: int = MAX_LINES,
                   numbered: bool = True) -> list[tuple[str, str]]:
    """The change as plain lines with line numbers, each with its sign (``"-"``, ``"+"``,
    ``" "``, ``"@"``; ``"…"`` for a folded run's count and what is not shown)."""
    hl = hunks(old, new)
    width = _width(hl) if numbered else 0
    out: list[tuple[str, str]] = []
    total = sum(len(h) for h in hl)
    seen = 0
    for visible, fold in folded(hl):
        seen += len(visible) + len(fold)
        out += [(r.sign, r.text if r.sign == "@" else _gutter(r, width) + r.text)
                for r in visible if width or r.sign != "@"]
        if fold:
            out.append(("…", f"… {count(fold)}"))
        if len(out) >= limit:
            break
    if total > seen:
        out.append(("…", f"… {total - seen} more diff lines not shown"))
    return out
