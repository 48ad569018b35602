"""The error a run's user causes: a mistake in the data, paths or run directory."""


class UserError(Exception):
    """A mistake in the data, paths or run directory: one line on stderr, no traceback."""
