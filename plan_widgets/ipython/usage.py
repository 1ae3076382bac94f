"""Usage errors: a mistake in a ``%%claude`` or ``%claude`` line fails its cell in one line,
as IPython's own magics do (``UsageError``: the cell's status is ``error``, so Run All,
papermill and nbconvert stop there); ``--help`` prints the help and the cell goes on.

argparse exits the process on ``--help`` and on errors; here an error raises :class:`Usage`
and a help request :class:`Help`, and the magic turns a :class:`Usage` into
:class:`UsageError`.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn

from IPython.core.error import UsageError as _IPythonUsageError


class Usage(Exception):
    """A mistake in a magic's line (one line); the magic raises it as :class:`UsageError`."""


class Help(Exception):
    """A help request (``--help``, a bare ``%claude``): its text is printed, the cell is ok."""


class UsageError(_IPythonUsageError):
    """IPython's ``UsageError``, shown as its one line through ``_render_traceback_``.

    IPython shows its own ``UsageError`` (that exact class) on stderr and sends no ``error``
    message; measured with ipykernel 7.4 / IPython 9.19, an awaited cell (every ``%%claude``
    cell is one) that raises it as the kernel's first error gets no ``execute_reply`` at all
    (``AttributeError: ... '_last_traceback'`` in the kernel's log: the page waits forever), and
    a later one a reply carrying an older cell's traceback. A subclass goes through IPython's
    ordinary path: one ``error`` output, reading ``UsageError: <message>``, status ``error``."""

    def _render_traceback_(self) -> list[str]:
        return [f"UsageError: {self}"]


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
        raise Help(message or "")

    parser.error = _error  # type: ignore[method-assign]
    parser.exit = _exit  # type: ignore[method-assign]
    return parser


def parse_cell_line(parser: argparse.ArgumentParser, line: str) -> argparse.Namespace:
    """The options of a ``%%claude`` line (``parser`` is the magic's, from magic_arguments).

    ``--help`` raises :class:`Help` (the usage line first); a mistake :class:`Usage`."""
    raising(parser, lambda message: f"%%claude: {message} (see %%claude --help)")
    argv = split(line, "%%claude")
    if any(a in ("-h", "--help") for a in argv):
        help_text = parser.format_help()
        body = help_text.split("\n\n", 2)[-1] if help_text.startswith("::") else help_text
        raise Help(f"{usage_line(parser)}\n\n{body}")
    return parser.parse_args(argv)


def usage_line(parser: argparse.ArgumentParser) -> str:
    """``usage: %%claude [--session SESSION] ...`` (IPython's parser formats it as a docstring)."""
    text = " ".join(parser.format_usage().replace("::", " ").split())
    if text.startswith("%claude"):
        text = "%" + text
    return f"usage: {text}"
