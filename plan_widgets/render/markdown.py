r"""The one path by which model-written text reaches the page.

Everything the model writes (streamed text, plans, tool inputs and results, questions, error
text that echoes them) is untrusted: it may carry instructions planted in files the agent read.
:func:`render_html` turns Markdown into HTML with raw HTML written out as text and unsafe link
targets refused (:mod:`.engine`), so headings, lists, code blocks and tables survive and nothing
executable does. The result is handed to the frontend as ``text/markdown`` made of a single
HTML block (no blank lines), which the frontend's Markdown renderer passes through unchanged.

Nor may the text turn into math: the frontends look for TeX (``$…$``, ``$$…$$``, ``\(…\)``,
``\[…\]``, ``\begin{…}``) in the Markdown source (JupyterLab's ``removeMath``, VS Code's KaTeX
plugin) and MathJax again in the rendered page, so ``rm -rf $HOME/x && cp $SRC/y .`` would show
as math and ``$\phantom{…}$`` could hide part of a command on an approval card. :func:`html_block`
(the last step for model text and for caller-built HTML alike) writes every ``$`` and ``\`` as a
character reference, which is the same character on the page but no delimiter in the source,
and puts the block in an element that MathJax skips.
"""

from __future__ import annotations

import html
import json
import re
from itertools import accumulate
from typing import Any

from .engine import block_lines, blocks, style_headings, to_html
from .look import CARD_HEADING_STYLE
from .look import CARD_TITLE_STYLE as CARD_TITLE_STYLE  # (their old home: render.look now)
from .look import SMALL_STYLE as SMALL_STYLE
from .look import WRAP_STYLE as WRAP_STYLE


def escape(text: Any) -> str:
    """Escape text for an HTML context (element content or a quoted attribute)."""
    return html.escape(str(text), quote=True)


# MathJax leaves alone an element with one of these classes and what is inside it: tex2jax_ignore
# (MathJax 2: the classic Notebook, nbconvert), mathjax_ignore (MathJax 3 and 4: JupyterLab 4,
# Notebook 7, which do not know tex2jax_ignore).
NO_MATH = "tex2jax_ignore mathjax_ignore"
# TeX delimiters' characters as character references (the same text, in content and in quoted
# attribute values alike, so links and code keep them).
_TEX_CHARS = str.maketrans({"$": "&#36;", "\\": "&#92;"})
_PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S | re.I)
_NEWLINE = re.compile(r"\r\n?|\n")  # what the frontend's Markdown parser counts as line breaks


def html_block(safe_html: str, cls: str) -> str:
    """Safe HTML → the one raw HTML block the frontend gets as ``text/markdown``.

    ``safe_html`` is already inert (every untrusted part escaped); this keeps it one HTML block
    (no blank line: newlines inside ``<pre>`` become ``&#10;``, other line breaks are only
    layout, and blank lines are dropped) and out of reach of the math renderers (``$`` and
    ``\\`` as character references, and a wrapper ``<div class="{cls} NO_MATH">``).
    """
    text = _PRE.sub(lambda m: m.group(1) + _NEWLINE.sub("&#10;", m.group(2)) + m.group(3),
                    safe_html)
    # str.replace, not a translate table: one pass in C each, a few times faster on a stream's
    # update (two characters only: a "$" written out holds no "\\", nor the other way round)
    text = text.replace("$", "&#36;").replace("\\", "&#92;")
    if "\r" in text:
        text = _NEWLINE.sub("\n", text)
    lines = filter(str.strip, text.split("\n"))  # blank lines dropped
    return "\n".join([f'<div class="{escape(cls)} {NO_MATH}">', *lines, "</div>"])


def inline_no_math(text: str, style: str = "") -> str:
    """Plain text as inline HTML (a ``<span>``) that the math renderers leave alone: escaped,
    ``$`` and ``\\`` as character references, in an element MathJax skips. For places that
    take only inline HTML and typeset it (a checkbox's description). ``style``: the span's
    own (trusted) inline style."""
    css = f' style="{escape(style)}"' if style else ""
    return f'<span class="{NO_MATH}"{css}>{escape(text).translate(_TEX_CHARS)}</span>'


def render_html(src: str, *, card: bool = False) -> str:
    """Markdown → inert HTML, as one block with no blank lines and no math (see module doc).

    ``card=True``: the headings are scaled down (:data:`CARD_HEADING_STYLE`), so that a card's
    own title (:data:`CARD_TITLE_STYLE`) stays the largest text on the card.
    """
    out = to_html(src or "")
    return html_block(style_headings(out, CARD_HEADING_STYLE) if card else out, "pw-md")


def markdown_bundle(src: str) -> dict[str, str]:
    """A display bundle: rendered (inert) Markdown for the page, the source as plain text."""
    return {"text/markdown": render_html(src), "text/plain": src}


_LINE_BREAK = re.compile(r"\r\n?|\n")  # what markdown-it counts as a line break
_BLANK = re.compile(r"^[ \t]*$")
# A partial last line that may yet become a list item or an indented line, either of which
# could continue the block before the blank line (a list, an indented code block).
_MAY_CONTINUE = re.compile(r"^(?:[ \t]|(?:[-*+]|\d+[.)]?)$|(?:[-*+]|\d+[.)])[ \t])")


def stable_prefix(text: str) -> int:
    """How much of streamed ``text`` is complete blocks that later text cannot change.

    The cut is made where a top-level block starts after a blank line, with the blocks found
    by the same parser that renders them, so a fenced code block (whatever its fence, inside a
    list or not) is never split, and a list, an indented code block or a table that continues
    across the cut never is either. A block whose first line is still arriving counts only if
    that line cannot turn into a list item or an indented line. Only a link reference
    definition arriving later can still change what came before (its links stay literal).
    """
    if not text:
        return 0
    return _cut(text, block_lines(_normalized(text)))[0]


def _normalized(text: str) -> str:
    """The source as markdown-it sees it (its ``normalize`` rule)."""
    return _LINE_BREAK.sub("\n", text).replace("\0", "\ufffd")


def _cut(text: str, firsts: list[int]) -> tuple[int, int]:
    """:func:`stable_prefix` from the first lines of the top-level blocks of ``text``:
    (offset, line) of the cut, or (0, 0) when nothing is stable yet."""
    starts = _line_starts(text)  # offset of each line
    last = len(starts) - 1  # the last line may be incomplete

    def line(i: int) -> str:
        end = starts[i + 1] if i < last else len(text)
        return _LINE_BREAK.sub("", text[starts[i]:end])

    for first in sorted(set(firsts), reverse=True):
        if first == 0 or first > last or not _BLANK.match(line(first - 1)):
            continue
        if first == last and _MAY_CONTINUE.match(line(first)):
            continue
        return starts[first], first
    return 0, 0


def _line_starts(text: str) -> list[int]:
    """The offset of each line of ``text`` (lines end at ``\r\n``, ``\r`` or ``\n``). Without
    ``\r``, from the lines' lengths in C (``accumulate``): a stream update of 7 KB took 0.1 ms
    in a Python loop over the regex's matches."""
    if "\r" in text:
        return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    return list(accumulate(map((1).__add__, map(len, text.split("\n")[:-1])), initial=0))


def render_stream(text: str) -> tuple[int, str, str]:
    """Streamed ``text`` as ``(cut, frozen, tail)``: ``cut`` is :func:`stable_prefix` (text),
    ``frozen`` the HTML of ``text[:cut]`` and ``tail`` that of ``text[cut:]``, each exactly what
    :func:`render_html` makes of that part alone (``""`` for an empty part).

    With comrak the text is parsed once, and both parts are cut from that one output (a stream
    update's Markdown went from 0.47 to 0.2 ms for 3.6 KB); otherwise each part is rendered
    alone (:func:`.engine.blocks` says when).
    """
    if not text:
        return 0, "", ""
    parsed = blocks(text)
    if parsed is None:
        cut = stable_prefix(text)
        return (cut, render_html(text[:cut]) if cut else "",
                render_html(text[cut:]) if cut < len(text) else "")
    cut, first = _cut(text, parsed.starts)
    frozen, tail = parsed.split(first if cut else 0)
    return (cut, html_block(frozen, "pw-md") if cut else "",
            html_block(tail, "pw-md") if cut < len(text) else "")


def summarize(value: Any, limit: int = 120) -> str:
    """A one-line plain-text summary of a value (escape it before putting it in HTML)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…" if limit > 0 else ""


_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*$")
_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_ONE_PARAGRAPH = re.compile(r"\s*<p>(.*)</p>\s*", re.S)
_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")


def plan_line_views(plan: str) -> list[tuple[int, str]]:
    """A plan's lines with text, each as inline HTML on its own (a line a user can click to
    comment on: a checkbox's description takes only inline HTML): ``(line number, html)``.
    Lines in a fenced code block are code; fences themselves are not lines to pick."""
    out: list[tuple[int, str]] = []
    fenced = False
    for n, line in enumerate(plan.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif line.strip():
            out.append((n, plan_line_html(line, code=fenced)))
    return out


HEADING_SIZES = {1: "1.15em", 2: "1.08em", 3: "1.02em"}
"""A heading's size in a plan shown line by line: the rendered card's (look.CARD_HEADING_STYLE;
a bold line of body size read as text, not as a heading)."""


def plan_line_html(line: str, *, code: bool = False) -> str:
    """One line of a plan as inline HTML, as it reads rendered: a heading bold, a list item
    with its marker, the rest the line's inline Markdown through the render path (a line that
    renders as a block of its own shows as its text); ``code``: a line of a code block."""
    indent = len(line) - len(line.lstrip(" \t"))
    text = line.strip()
    heading, item = _HEADING.match(text), _ITEM.match(text)
    if code:
        return inline_html(f"<code>{escape(line)}</code>")
    if heading:  # as big as the rendered plan's heading of its level (issue 42, point 9)
        size = HEADING_SIZES.get(len(heading.group(1)), "1em")
        return inline_html(f"<b>{_inline(heading.group(2))}</b>",
                           f"font-size:{size};line-height:1.6")
    elif item:
        mark = "•" if item.group(1) in "-*+" else item.group(1)
        inner = f"{escape(mark)} {_inline(item.group(2))}"
    else:
        inner = _inline(text)
    return inline_html(inner, f"padding-left:{min(indent, 12) * 0.5:g}em" if indent else "")


def inline_html(safe_inline: str, style: str = "") -> str:
    """Safe inline HTML in a ``<span>`` the math renderers leave alone (``$`` and ``\\`` as
    character references)."""
    css = f' style="{escape(style)}"' if style else ""
    return f'<span class="{NO_MATH}"{css}>{safe_inline.translate(_TEX_CHARS)}</span>'


def _inline(text: str) -> str:
    """``text``'s inline Markdown as safe inline HTML (its text, escaped, if it is a block)."""
    m = _ONE_PARAGRAPH.fullmatch(to_html(text))
    if m is None or "<p>" in m.group(1):
        return escape(text)
    return " ".join(m.group(1).split("\n"))
