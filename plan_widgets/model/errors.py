"""The errors users see: each is shown as one line naming the cause and the way out, never
as a traceback."""

from __future__ import annotations


class PlanWidgetsError(Exception):
    """Base of every error whose message is meant for the user (shown as one line)."""


class OptionError(PlanWidgetsError, ValueError):
    """A user mistake in the options: shown as one line, never a traceback."""


class SessionError(PlanWidgetsError, RuntimeError):
    """The session cannot do what was asked; the message is for the user."""
