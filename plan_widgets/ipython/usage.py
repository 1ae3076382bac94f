"""Usage errors: a mistake in a ``%%claude`` or ``%claude`` line is one printed line, or the
help text, never a traceback.

argparse exits the process on ``--help`` and on errors; here both raise :class:`Usage`, whose
message the magic prints.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn


class Usage(Exception):
    """A usage error or a --help request; the message is printed, not raised."""


def one_line(text: str) -> str:
    """``text`` on one line (an error message from elsewhere may span several)."""
    return " ".join(text.split())


def split(line: str, prog: str) -> list[str]:
    """The words of a magic's line, as a shell would split them."""
    try:
        return shlex.split(line)
    except ValueError as e:
        raise Usage(f"{prog}: {e}") from e


def take(argv: list[str], flag: str) -> str | None:
    """Remove ``flag VALUE`` from ``argv`` (anywhere in it) and return VALUE (None if absent)."""
    if flag not in argv:
        return None
    i = argv.index(flag)
    if i + 1 >= len(argv):
        raise Usage(f"%claude: {flag} needs a value")
    value = argv[i + 1]
    del argv[i : i + 2]
    return value


def raising(parser: argparse.ArgumentParser, error: Any) -> argparse.ArgumentParser:
    """Make ``parser`` raise :class:`Usage` instead of exiting: ``error(message)`` gives the
    text of an argument error; an exit (``--help``) carries argparse's own message."""

    def _error(message: str) -> NoReturn:
        raise Usage(error(message))

    def _exit(status: int = 0, message: str | None = None) -> NoReturn:
        raise Usage(message or "")

    parser.error = _error  # type: ignore[method-assign]
    parser.exit = _exit  # type: ignore[method-assign]
    return parser


def parse_cell_line(parser: argparse.ArgumentParser, line: str) -> argparse.Namespace:
    """The options of a ``%%claude`` line (``parser`` is the magic's, from magic_arguments).

    ``--help`` and mistakes raise :class:`Usage` with the usage line first."""
    raising(parser, lambda message: (f"{usage_line(parser)}\n%%claude: {message} "
                                     "(see %%claude --help)"))
    argv = split(line, "%%claude")
    if any(a in ("-h", "--help") for a in argv):
        help_text = parser.format_help()
        body = help_text.split("\n\n", 2)[-1] if help_text.startswith("::") else help_text
        raise Usage(f"{usage_line(parser)}\n\n{body}")
    return parser.parse_args(argv)


def usage_line(parser: argparse.ArgumentParser) -> str:
    """``usage: %%claude [--session SESSION] ...`` (IPython's parser formats it as a docstring)."""
    text = " ".join(parser.format_usage().replace("::", " ").split())
    if text.startswith("%claude"):
        text = "%" + text
    return f"usage: {text}"
