"""The errors users see: each is shown as one line naming the cause and the way out, never
as a traceback."""

from __future__ import annotations


class PlanWidgetsError(Exception):
    """Base of every error whose message is meant for the user (shown as one line)."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for it (in a cell, a notebook's error output, papermill's
        report): ``SessionError: <message>``, one line, none of the package's frames. The cell
        still fails (status ``error``), so Run All and executors stop there."""
        return [f"{type(self).__name__}: {' '.join(str(self).split())}"]


class OptionError(PlanWidgetsError, ValueError):
    """A user mistake in the options: shown as one line, never a traceback."""


class SessionError(PlanWidgetsError, RuntimeError):
    """The session cannot do what was asked; the message is for the user."""


class TurnError(SessionError):
    """A ``%%claude`` cell's turn ended in an error (a rejected key, the CLI gone, an API
    error after its retries): the cell fails with that one line, below the turn's output."""


class Interrupted(SessionError):
    """The kernel's stop button interrupted a ``%%claude`` cell: it fails, in one line
    saying what became of the turn."""
