"""Terminal output for untrusted text: Markdown rendered with ``rich`` when it is installed and
the stream is a terminal, plain text otherwise.

Model text (plans, replies, questions, tool input, CLI messages) is untrusted here as in the
browser. Two rules keep it from acting on the terminal:

- ``terminal_safe`` replaces every control character but newline and tab (ESC, BEL, CR,
  backspace, C1 controls such as CSI, DEL) and the bidirectional-text controls with visible
  stand-ins, before the text is parsed or written: no escape sequence from the model reaches
  the terminal raw, rendered or not.
- rich only ever gets ``Text`` objects and ``SafeMarkdown`` built from the source, never a
  markup string: ``[bold]`` or ``:emoji:`` in model text stays literal. ``SafeMarkdown``
  parses with raw HTML off (as ``plan_widgets.render`` does), so HTML is shown as text rather
  than silently dropped, and links are printed as ``text (url)``, never as terminal hyperlinks.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

from ..render.markdown import stable_prefix

# C0 controls but \t and \n, DEL, C1 controls, and the bidi controls (Trojan Source).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _stand_in(m: re.Match[str]) -> str:
    c = m.group()
    cp = ord(c)
    if cp < 0x20:
        return chr(0x2400 + cp)  # the Control Pictures block: ESC shows as ␛
    if cp == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{cp:04X}>"


def terminal_safe(text: Any) -> str:
    """``text`` with no character that a terminal would act on (see the module docstring).

    Line endings become ``\\n`` (a lone carriage return could overwrite what was shown).
    """
    s = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.sub(_stand_in, s)


def rich_available() -> bool:
    try:
        import rich.console  # noqa: F401
        import rich.markdown  # noqa: F401
    except ImportError:
        return False
    return True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class TerminalOut:
    """Writes lines and Markdown to ``stream``; rich when ``use_rich`` (default: rich is
    installed and ``stream`` is a terminal)."""

    def __init__(self, stream: TextIO | None = None, use_rich: bool | None = None,
                 force_terminal: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        if use_rich is None:
            use_rich = _is_terminal(self.stream) and rich_available()
        self.console: Any = None
        if use_rich:
            from rich.console import Console

            # markup, emoji and highlighting off: nothing in a string is interpreted.
            self.console = Console(file=self.stream, markup=False, emoji=False,
                                   highlight=False, force_terminal=force_terminal)

    @property
    def rich(self) -> bool:
        return self.console is not None

    def write(self, text: str) -> None:
        """Write ``text`` as it is (made terminal-safe), no newline added."""
        self.stream.write(terminal_safe(text))
        self.stream.flush()

    def line(self, text: str, style: str | None = None) -> None:
        """One line of text (terminal-safe); ``style`` is a rich style name, ignored in plain."""
        if self.console is None:
            self.write(text + "\n")
            return
        from rich.text import Text

        self.console.print(Text(terminal_safe(text), style=style or ""))

    def markdown(self, src: str) -> None:
        """``src`` rendered as Markdown (rich), or as it is (plain), ending with a newline."""
        src = terminal_safe(src)
        if self.console is None:
            self.write(src if src.endswith("\n") else src + "\n")
            return
        self.console.print(SafeMarkdown(src))

    def panel(self, title: str, src: str, note: str | None = None) -> None:
        """Markdown in a box with a title (rich), or between ``=== title ===`` lines (plain)."""
        src = terminal_safe(src)
        if self.console is None:
            bar = f"=== {title} ==="
            self.write(f"\n{bar}\n{src.rstrip()}\n{'=' * len(bar)}\n")
            if note:
                self.write(f"({note})\n")
            return
        from rich.panel import Panel
        from rich.text import Text

        self.console.print()
        self.console.print(Panel(
            SafeMarkdown(src), title=Text(terminal_safe(title), style="bold"),
            title_align="left", subtitle=Text(terminal_safe(note)) if note else None,
            subtitle_align="left", padding=(1, 2),
        ))


def SafeMarkdown(src: str) -> Any:  # noqa: N802 - reads as the rich renderable it makes
    """A ``rich.markdown.Markdown`` of ``src`` parsed with raw HTML off, links as text."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    md = Markdown(terminal_safe(src), hyperlinks=False)
    # rich parses with HTML on and then drops HTML tokens, hiding text from the reader;
    # parsed with HTML off, as the notebook's renderer does, the tags show as text.
    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    md.parsed = parser.parse(md.markup)
    return md


class MarkdownStream:
    """Streamed Markdown: each block is printed (rendered) once it is complete.

    A block is complete when later text cannot change it (``render.stable_prefix``); the rest
    is printed by ``flush`` (when a tool starts, a decision is asked, or the turn ends). In
    plain text, text is written as it arrives.
    """

    def __init__(self, out: TerminalOut) -> None:
        self.out = out
        self.pending = ""
        self._blocks = 0  # blocks printed since the last flush (a blank line between them)

    def feed(self, delta: str) -> None:
        if not self.out.rich:
            self.out.write(delta)
            self.pending += delta
            return
        self.pending += terminal_safe(delta)
        cut = stable_prefix(self.pending)
        if cut > 0:
            self._print(self.pending[:cut])
            self.pending = self.pending[cut:]

    def flush(self) -> None:
        """Print what is left; the next text starts a new run of blocks."""
        if not self.out.rich:
            if self.pending and not self.pending.endswith("\n"):
                self.out.write("\n")
        elif self.pending.strip():
            self._print(self.pending)
        self.pending = ""
        self._blocks = 0

    def _print(self, src: str) -> None:
        if not src.strip():
            return
        if self._blocks:
            self.out.console.print()
        self.out.markdown(src)
        self._blocks += 1
