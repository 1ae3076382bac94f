"""The Markdown parser behind the one render path, and the two safety rules it applies.

**Which parser.** `comrak <https://github.com/kivikakk/comrak>`_ (the Rust port of GitHub's
cmark-gfm, used by crates.io, docs.rs and GitLab) through its Python binding, where a wheel
exists (Linux x86_64 and aarch64, macOS from Python 3.11: pyproject.toml installs it only
there); else ``markdown-it-py`` (Windows, or a platform with no wheel). Both with the same
rules: CommonMark plus tables and strikethrough, no raw HTML, no autolinking of bare URLs, no
smart punctuation.

Why not markdown-it-py alone: measured on this machine (2 cores) on the benchmarks' 200 KB
answer, markdown-it-py renders it in 269 ms and its block structure alone (what
:func:`block_lines` needs) takes 112 ms; comrak does both in 6-20 ms. Streaming renders every
byte about once, so with markdown-it-py the rendering alone cost 54 µs per delta of a
5,000-delta answer: the whole gap between the kernel's CPU and the bare SDK's
(docs/benchmarks.md, figure 4). Tried and refused: ``markdown-it-pyrs`` (markdown-it.rs) panics
on the two characters ``[` `` (found by ``tests/test_render.py``'s hostile-text property test),
and ``cmarkgfm``'s binding leaks the output and the syntax tree of every call (5.9 MB per
200 KB render with extensions). comrak's binding grew 0.9 MB over its first 100 renders of
200 KB (warm-up) and not at all over the next 200.

**No raw HTML.** comrak runs with ``escape`` (raw HTML is written out as text: ``<script>``
arrives as ``&lt;script&gt;``); markdown-it-py parses raw HTML the same way and its two render
rules write it out as text too, so a raw HTML block (its lines up to the next blank line,
Markdown in them included) shows as the same unformatted text with either parser. So every tag
and attribute in the output was written by the parser, with attribute values escaped, and
:func:`_safe_links` and :func:`style_headings` can read them with a regular expression.

**Links.** Only relative links, anchors, ``http:``, ``https:`` and ``mailto:``. A link to
anything else (``javascript:``, ``data:``, ``vbscript:``, ``file:``, an app's own scheme like
``vscode:``) loses its target and stays as its text; such an image becomes its alt text. The
rule is applied to the output (:func:`_safe_links`), the same way for both parsers.

**Images** (:func:`_image`). A browser loads an image as soon as it renders, so an image from
another server in text the model copied from a page or a file could carry data out through its
URL. Such an image is not loaded by default: a link naming its host takes its place ("image
from example.com, not loaded"); :func:`allow_remote_images` (``%config
ClaudeMagics.remote_images``) allows them all or some hosts. Relative images (the page's own
server) load, and so do ``data:`` images of a raster type (PNG, JPEG, GIF, WebP) up to
:data:`DATA_IMAGE_LIMIT`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

_SAFE_SCHEMES = ("http:", "https:", "mailto:")
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")


def link_allowed(url: str) -> bool:
    """Allow relative links, anchors and http(s)/mailto; refuse javascript:, data:, vbscript:..."""
    # Entities and control characters are how "java&#115;cript:" sneaks past naive checks.
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(url))
    m = _SCHEME.match(cleaned)
    if m is None:
        return True  # relative link or anchor
    return (m.group(1).lower() + ":") in _SAFE_SCHEMES


@lru_cache(maxsize=1)
def _comrak() -> Callable[..., str] | None:
    try:
        import comrak
    except ImportError:
        return None
    ext = comrak.ExtensionOptions()
    ext.table = True
    ext.strikethrough = True
    opts = comrak.RenderOptions()
    opts.escape = True  # raw HTML as text (not dropped: a plan hides nothing from its reader)
    blocks = comrak.RenderOptions()
    blocks.escape = True
    blocks.sourcepos = True

    def render(src: str, sourcepos: bool = False) -> str:
        return comrak.render_markdown(src, extension_options=ext,
                                      render_options=blocks if sourcepos else opts)

    return render


@lru_cache(maxsize=1)
def _python() -> Any:
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml

    # html=True so that raw HTML is parsed as comrak parses it (a raw HTML block takes the
    # lines up to the next blank line, Markdown in them included); both render rules below
    # write it out as text, as comrak's ``escape`` does, so the two engines show the same
    # (tests/test_render_engines.py compares them). With html=False the lines of a block were
    # a paragraph whose Markdown was formatted.
    class _Parser(MarkdownIt):
        def validateLink(self, url: str) -> bool:
            return True  # every link is parsed as a link: _safe_links decides

    md = _Parser("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")

    def as_text(_self: Any, tokens: Any, idx: int, _options: Any, _env: Any) -> str:
        return str(escapeHtml(tokens[idx].content))

    md.add_render_rule("html_block", as_text)
    md.add_render_rule("html_inline", as_text)
    return md


def parser_name() -> str:
    """Which parser renders here: ``"comrak"`` or ``"markdown-it-py"``."""
    return "comrak" if _comrak() is not None else "markdown-it-py"


def _render_python(src: str) -> str:
    return str(_python().render(src))


def renderer(name: str | None = None) -> Callable[[str], str]:
    """The parser's own render (links not yet checked): comrak where it is installed, or the
    one ``name``d."""
    fast = _comrak()
    if name == "markdown-it-py" or (name is None and fast is None):
        return _render_python
    if fast is None:
        raise ImportError("comrak is not installed")
    return fast


def to_html(src: str, name: str | None = None) -> str:
    """Markdown → inert HTML: no raw HTML, links and images only to allowed targets."""
    return _safe_output(renderer(name)(src))


def _safe_output(out: str) -> str:
    out = _safe_links(out)
    return _ALIGN.sub(r'<\1 style="text-align:\2">', out) if "<table>" in out else out


# Links cannot contain links (CommonMark), so the first </a> closes the <a ...> it follows.
_A = re.compile(r'<a href="([^"]*)"[^>]*>(.*?)</a>', re.S)
_IMG = re.compile(r'<img src="([^"]*)" alt="([^"]*)"(?: title="[^"]*")? ?/?>')
# comrak writes a column's alignment as align="..."; markdown-it-py, like JupyterLab's own
# Markdown tables, as a style (kept by the sanitizer when a saved notebook is opened again).
_ALIGN = re.compile(r'<(t[hd]) align="(left|center|right)">')


def _target_ok(url: str) -> bool:
    # comrak empties a javascript:/vbscript:/file:/data: target itself: no target, no link
    return bool(url) and link_allowed(url)


def _safe_links(out: str) -> str:
    """A link whose target is refused becomes its text; an image, see :func:`_image`."""
    if "<a " not in out and "<img " not in out:
        return out
    if "<img " in out:
        out = _images(out)
    return _A.sub(lambda m: m.group(0) if _target_ok(m.group(1)) else m.group(2), out)


# -- images ----------------------------------------------------------------------------------

_remote_images: bool | frozenset[str] = False


def allow_remote_images(value: bool | Iterable[str]) -> None:
    """Which remote images load: none (False, the default), all (True), or those of the hosts
    named. Set by ``%config ClaudeMagics.remote_images`` (the ipython layer), read by every
    render after it."""
    global _remote_images
    _remote_images = value if isinstance(value, bool) else frozenset(
        h.strip().lower() for h in value if h.strip())


def remote_images() -> bool | frozenset[str]:
    """The setting :func:`allow_remote_images` made."""
    return _remote_images


DATA_IMAGE_LIMIT = 1_000_000
"""A ``data:`` image's URL longer than this (about 730 KB of image) shows as its alt text: a
page's Markdown output carrying megabytes stays slow in every frontend that opens it."""
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=]*", re.I)
_IMG_OR_LINK = re.compile(_IMG.pattern + r'|<a [^>]*>|</a>')


def _images(out: str) -> str:
    """Every ``<img>`` of ``out`` through :func:`_image`, knowing whether it is inside a link
    (a placeholder there must not be a link of its own)."""
    depth = 0

    def one(m: re.Match[str]) -> str:
        nonlocal depth
        tag = m.group(0)
        if tag.startswith("<a "):
            depth += 1
        elif tag == "</a>":
            depth = max(0, depth - 1)
        else:
            return _image(tag, m.group(1), m.group(2), depth > 0)
        return tag

    return _IMG_OR_LINK.sub(one, out)


def _image(tag: str, src: str, alt: str, in_link: bool) -> str:
    """An image: kept if it loads from the page's own server (a relative path), is a
    ``data:`` image of a raster type and sane size, or is remote from an allowed host. A
    remote image is otherwise not loaded (text the model copied from a page or a file could
    send data out through its URL as soon as it renders): a link naming its host takes its
    place. A refused target (``javascript:``...) leaves the alt text."""
    url = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(src))
    if url.lower().startswith("data:"):
        if _DATA_IMAGE.fullmatch(url) and len(url) <= DATA_IMAGE_LIMIT:
            return tag
        return alt
    if not _target_ok(src):
        return alt
    slashed = url.replace("\\", "/")  # browsers read "\\host" as "//host"
    if _SCHEME.match(slashed) is None and not slashed.startswith("//"):
        return tag  # relative: from the page's own server
    try:
        host = urlsplit(slashed).hostname or ""
    except ValueError:
        host = ""
    allowed = _remote_images
    if allowed is True or (host and not isinstance(allowed, bool) and host in allowed):
        return tag
    label = f"image from {html.escape(host) or 'an unknown host'}, not loaded"
    label = f"{alt} ({label})" if alt else label
    return label if in_link else f'<a href="{src}">{label}</a>'


_HEADING = re.compile(r"<h([1-6])>")


def style_headings(out: str, styles: dict[str, str]) -> str:
    """Give each ``<hN>`` of rendered output its style from ``styles`` (``h4``'s for h5, h6)."""
    return _HEADING.sub(
        lambda m: f'<h{m.group(1)} style="{styles.get("h" + m.group(1), styles["h4"])}">', out)


# A block's element starts a line of comrak's output (inline elements have positions too).
_SOURCEPOS = re.compile(r'^<[a-z][a-z0-9]* data-sourcepos="(\d+):\d+-(\d+):', re.M)
# The same, found from the line break before it: a pattern that starts with a literal is
# searched for that literal first, twice as fast as trying "^" at every offset (a stream
# update's output of 20 KB: 55 against 101 µs).
_SOURCEPOS_SCAN = re.compile("\n" + _SOURCEPOS.pattern[1:])
_SOURCEPOS_ATTR = re.compile(r' data-sourcepos="[^"]*"')
# A line that may start a link reference definition ("[label]: target", the one thing that lets
# text in one part change the other): any line starting with "[" counts, to be safe.
_REFERENCE = re.compile(r"^ {0,3}\[", re.M)


def _top_level(marked: str) -> list[int]:
    """The first line (0-based) of each top-level block of comrak's output with source
    positions, in document order (a block comes before the blocks inside it, which lie within
    its span): a block that starts after the span of the last top-level block is the next
    top-level block. A block of raw HTML (written out as text) has no element, so it has no
    position: it is no place to cut, but the text before the next element belongs to it.

    ``findall``'s tuples, not match objects: a stream update scans a few hundred elements, and
    this loop was the largest part of its Markdown's cost (0.3 of 0.65 ms for 7 KB, 2026-12-06).
    """
    lines: list[int] = []
    end = 0  # blocks are made of whole lines: the next top-level block starts on a later line
    for first, last in _SOURCEPOS_SCAN.findall("\n" + marked):
        if int(first) > end:
            lines.append(int(first) - 1)
            end = int(last)
    return lines


def _offset(marked: str, line: int) -> int:
    """Where the top-level block starting on ``line`` (0-based) begins in ``marked``: the line
    of the first element of :data:`_SOURCEPOS` that starts on that line (escaped text holds no
    ``"``, so the attribute is found only in elements)."""
    key = f' data-sourcepos="{line + 1}:'
    i = marked.find(key)
    while i != -1:
        start = marked.rfind("\n", 0, i) + 1
        m = _SOURCEPOS.match(marked, start)
        if m is not None and m.start(1) == i + len(' data-sourcepos="'):
            return start
        i = marked.find(key, i + 1)
    return len(marked)


def block_lines(text: str, name: str | None = None) -> list[int]:
    """The line (0-based) on which each top-level block of ``text`` starts, as the renderer's
    parser sees it. ``text`` is normalized (line breaks are ``\\n``)."""
    fast = _comrak()
    if name == "markdown-it-py" or (name is None and fast is None):
        py = _python()
        tokens: list[Any] = []
        py.block.parse(text, py, {}, tokens)
        # no cut before a raw HTML block, as with comrak (it gives such a block no position)
        return [t.map[0] for t in tokens if t.level == 0 and t.map and t.type != "html_block"]
    if fast is None:
        raise ImportError("comrak is not installed")
    return _top_level(fast(text, True))


class Blocks:
    """``text`` parsed once, to be cut between top-level blocks (:meth:`split`) and each part's
    HTML taken from the one output: what :func:`to_html` makes of each part alone."""

    def __init__(self, marked: str) -> None:
        self._marked = marked
        self.starts = _top_level(marked)  # each top-level block's first line

    def split(self, first: int) -> tuple[str, str]:
        """The HTML of the blocks before line ``first`` and of the rest (all of it for 0)."""
        line = next((n for n in self.starts if n >= first), None)
        at = 0 if first <= 0 else len(self._marked) if line is None else _offset(
            self._marked, line)
        return _finish(self._marked[:at]), _finish(self._marked[at:])


def blocks(text: str) -> Blocks | None:
    """``text`` parsed for :class:`Blocks`, or None where that is not possible: with
    markdown-it-py, or when ``text`` may hold a link reference definition (a link in one part
    could then take its target from the other, so each part must be parsed alone)."""
    fast = _comrak()
    if fast is None or ("[" in text and _REFERENCE.search(text)):
        return None
    return Blocks(fast(text, True))


def _finish(marked: str) -> str:
    return _safe_output(_SOURCEPOS_ATTR.sub("", marked))
