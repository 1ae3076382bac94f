"""Source code as inert, highlighted HTML (the code the agent wants to run, on a card).

Pygments escapes every token (``<``, ``>``, ``&``, quotes) and adds only ``<span style=...>``
of its own; without Pygments the code is escaped plainly. The result is a ``<pre>`` to hand to
:func:`plan_widgets.render.markdown.html_block` like any caller-built safe HTML (which also
keeps ``$`` and ``\\`` away from the math renderers).
"""

from __future__ import annotations

import re
from functools import cache

from .look import CODE_TOKENS
from .markdown import escape

MAX_LINES = 200
"""Lines shown at most (the rest are counted)."""


def highlight_python(code: str, max_lines: int = MAX_LINES) -> str:
    """``code`` as a highlighted, escaped ``<pre>`` block."""
    lines = code.splitlines()
    more = len(lines) - max_lines
    text = "\n".join(lines[:max_lines])
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        classed = highlight(text, PythonLexer(), HtmlFormatter(nowrap=True)).rstrip("\n")
        styles = _token_styles()
        body = _SPAN.sub(lambda m: _styled(styles.get(m[1])), classed)
    except ImportError:  # pragma: no cover - IPython brings Pygments
        body = escape(text)
    tail = f"\n… {more:,} more lines" if more > 0 else ""
    return f'<pre class="pw-code">{body}{escape(tail)}</pre>'


_SPAN = re.compile(r'<span class="([a-z0-9]+)">')


def _styled(style: str | None) -> str:
    return f'<span style="color:{style}">' if style else "<span>"


@cache
def _token_styles() -> dict[str, str]:
    """Pygments' short class of each token type → its colour from :data:`CODE_TOKENS` (inline
    styles: a saved notebook carries no style sheet of ours)."""
    from pygments.token import STANDARD_TYPES

    out = {}
    for ttype, short in STANDARD_TYPES.items():
        name = str(ttype).removeprefix("Token").lstrip(".")
        while name and name not in CODE_TOKENS:
            name = name.rpartition(".")[0]
        if name and short:
            out[short] = CODE_TOKENS[name]
    return out
