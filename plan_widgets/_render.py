"""The one path by which model-written text reaches the page.

Everything the model writes (streamed text, plans, tool inputs and results, questions, error
text that echoes them) is untrusted: it may carry instructions planted in files the agent read.
:func:`render_html` turns Markdown into HTML with raw HTML disabled (markdown-it-py escapes it)
and unsafe link targets refused, so headings, lists, code blocks and tables survive and nothing
executable does. The result is handed to the frontend as ``text/markdown`` made of a single
HTML block (no blank lines), which the frontend's Markdown renderer passes through unchanged.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

_SAFE_SCHEMES = ("http:", "https:", "mailto:")
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")


def _validate_link(url: str) -> bool:
    """Allow relative links, anchors and http(s)/mailto; refuse javascript:, data:, vbscript:..."""
    # Entities and control characters are how "java&#115;cript:" sneaks past naive checks.
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(url))
    m = _SCHEME.match(cleaned)
    if m is None:
        return True  # relative link or anchor
    return (m.group(1).lower() + ":") in _SAFE_SCHEMES


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    md.validateLink = _validate_link  # type: ignore[method-assign]
    return md


def escape(text: Any) -> str:
    """Escape text for an HTML context (element content or a quoted attribute)."""
    return html.escape(str(text), quote=True)


def render_html(src: str) -> str:
    """Markdown → inert HTML, as one block with no blank lines (see module doc)."""
    body = _md().render(src or "")
    # Newlines inside <pre> would let a blank line end the HTML block in the frontend's
    # Markdown parser, so keep them as character references; elsewhere they are only layout.
    body = re.sub(r"<pre>(.*?)</pre>", lambda m: "<pre>" + m.group(1).replace("\n", "&#10;")
                  + "</pre>", body, flags=re.S)
    body = "\n".join(line for line in body.split("\n") if line.strip())
    return f'<div class="pw-md">\n{body}\n</div>'


def markdown_bundle(src: str) -> dict[str, str]:
    """A display bundle: rendered (inert) Markdown for the page, the source as plain text."""
    return {"text/markdown": render_html(src), "text/plain": src}


_FENCE = re.compile(r"^(```|~~~)", re.M)


def stable_prefix(text: str) -> int:
    """How much of streamed ``text`` is complete blocks that later text cannot change.

    A block is complete once a blank line follows it outside any open code fence. Tables,
    lists and paragraphs that continue across the cut are never split, because a cut is only
    made at a blank line that the next text does not continue (an indented or list line).
    """
    cut = 0
    in_fence = False
    pos = 0
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):  # the last line may be incomplete
        pos += len(line) + 1
        if _FENCE.match(line.lstrip()) and len(line) - len(line.lstrip()) < 4:
            in_fence = not in_fence
            continue
        if in_fence or line.strip():
            continue
        nxt = lines[i + 1]
        if i + 1 == len(lines) - 1 and not nxt:
            continue  # nothing known yet about what follows
        if nxt[:1] in (" ", "\t") or re.match(r"^\s*([-*+]|\d+[.)])\s", nxt or ""):
            continue  # a list or indented block may continue across this blank line
        if nxt == "":
            continue
        cut = pos
    return cut


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
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
