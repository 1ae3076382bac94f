"""What changed between two versions of a plan: a line diff (``difflib``) with the words that
changed inside a changed line, as escaped HTML for the page and as a unified diff for text.

Both versions are model-written (untrusted): every piece of text is escaped here, and the HTML
goes to the page through the same last step as rendered Markdown (``html_block``, by the
widget that shows it), so a plan can neither inject markup nor turn into math.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .look import DIFF_ADD_LINE, DIFF_DEL, DIFF_DEL_LINE, DIFF_INS
from .markdown import escape

# The diff's styles live in render/look.py (DIFF_*); these old names stay for code that used them.
_ADD_LINE, _DEL_LINE, _INS, _DEL = DIFF_ADD_LINE, DIFF_DEL_LINE, DIFF_INS, DIFF_DEL
_WORDS = re.compile(r"\s+|\S+")
"""Tokens for the word diff inside a changed line: words (with their punctuation) and the
space between them."""
MAX_WORD_DIFF = 2000
"""Longer lines are shown as removed and added whole (a word diff of them is noise)."""


@dataclass(frozen=True)
class DiffStats:
    """How many lines a revision added and removed."""

    added: int
    removed: int

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)

    def __str__(self) -> str:
        return f"+{self.added} −{self.removed} lines"


def _lines(text: str) -> list[str]:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def diff_stats(old: str, new: str) -> DiffStats:
    """Lines added and removed from ``old`` to ``new``."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, _lines(old), _lines(new), autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return DiffStats(added, removed)


def unified_diff(old: str, new: str, old_name: str = "previous plan",
                 new_name: str = "revised plan") -> str:
    """A unified diff of two texts (plain text; empty if they are the same)."""
    return "\n".join(difflib.unified_diff(_lines(old), _lines(new), old_name, new_name,
                                          lineterm=""))


def diff_markdown(old: str, new: str, old_name: str = "previous plan",
                  new_name: str = "revised plan") -> str:
    """The unified diff as a fenced ``diff`` block (the fence outruns any backticks inside)."""
    body = unified_diff(old, new, old_name, new_name) or "(no changes)"
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}diff\n{body}\n{fence}"


def _line(prefix: str, style: str, html: str) -> str:
    return f'<span style="display:block;{style}">{escape(prefix)}{html}</span>'


def _word_pair(old: str, new: str) -> tuple[str, str]:
    """One changed line, old and new, with the words that differ marked (escaped HTML)."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    left: list[str] = []
    right: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        was, now = escape("".join(a[i1:i2])), escape("".join(b[j1:j2]))
        if tag == "equal":
            left.append(was)
            right.append(now)
            continue
        if was:
            left.append(f'<del style="{DIFF_DEL}">{was}</del>')
        if now:
            right.append(f'<ins style="{DIFF_INS}">{now}</ins>')
    return "".join(left), "".join(right)


def _rows(old: str, new: str, notes: Mapping[int, str] | None = None) -> Iterator[str]:
    a, b = _lines(old), _lines(new)
    notes = notes or {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for k, line in enumerate(a[i1:i2], i1 + 1):
                yield _line("  ", "", escape(line)) + notes.get(k, "")
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        removed, added = [], []
        for k in range(pairs):  # changed lines, paired in order: mark the words
            was, now = a[i1 + k], b[j1 + k]
            if len(was) + len(now) <= MAX_WORD_DIFF:
                left, right = _word_pair(was, now)
            else:
                left, right = escape(was), escape(now)
            removed.append(_line("- ", DIFF_DEL_LINE, left))
            added.append(_line("+ ", DIFF_ADD_LINE, right))
        removed += [_line("- ", DIFF_DEL_LINE, escape(x)) for x in a[i1 + pairs:i2]]
        added += [_line("+ ", DIFF_ADD_LINE, escape(x)) for x in b[j1 + pairs:j2]]
        yield from removed
        yield from added
        yield "".join(notes.get(k, "") for k in range(i1 + 1, i2 + 1))


def diff_html(old: str, new: str, notes: Mapping[int, str] | None = None,
              against: str = "the previous plan") -> str:
    """The changes from ``old`` to ``new`` as escaped HTML: removed lines marked ``-`` on red,
    added lines ``+`` on green, and inside a changed line the words struck out and inserted.
    Hand it to the page through ``html_block`` (``set_html``). ``notes``: safe HTML shown
    after a line of ``old`` (by its 1-based number; a changed line's after its hunk);
    ``against``: what ``old`` is, in the head's words."""
    stats = diff_stats(old, new)
    head = (f"<div><small>Changes from {escape(against)}: {escape(str(stats))}</small></div>"
            if stats.changed else f"<div><small>No changes from {escape(against)}.</small></div>")
    body = "".join(_rows(old, new, notes))
    return (f'{head}<pre class="pw-diff" style="white-space:pre-wrap">{body}</pre>')
