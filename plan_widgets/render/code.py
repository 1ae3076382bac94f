"""Source code as inert, highlighted HTML (the code the agent wants to run, on a card).

Pygments escapes every token (``<``, ``>``, ``&``, quotes) and adds only ``<span style=...>``
of its own; without Pygments the code is escaped plainly. The result is a ``<pre>`` to hand to
:func:`plan_widgets.render.markdown.html_block` like any caller-built safe HTML (which also
keeps ``$`` and ``\\`` away from the math renderers).
"""

from __future__ import annotations

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

        body = highlight(text, PythonLexer(), HtmlFormatter(nowrap=True, noclasses=True,
                                                            style="default")).rstrip("\n")
    except ImportError:  # pragma: no cover - IPython brings Pygments
        body = escape(text)
    tail = f"\n… {more:,} more lines" if more > 0 else ""
    return f'<pre class="pw-code">{body}{escape(tail)}</pre>'
