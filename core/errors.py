"""Errors that reach a person.

Every exception meant for the user derives from :class:`ClawbackError`; the CLI prints its message
as one line on stderr and exits non-zero, the TUI shows it as a notification. Anything else that
escapes is a bug.
"""


class ClawbackError(Exception):
    """A failure with a message written for the user."""

    exit_code = 1


class ConfigError(ClawbackError):
    """The config file is unreadable or holds a bad value."""

    exit_code = 2


class UsageError(ClawbackError):
    """The user asked for something that cannot be done as asked."""

    exit_code = 2


class SessionKeyError(UsageError):
    """A session key does not follow the grammar."""


class NotFoundError(ClawbackError):
    """A session, file or fact that was named does not exist."""
