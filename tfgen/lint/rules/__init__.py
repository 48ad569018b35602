"""The rules, one module per topic; importing this package registers every rule."""

from . import checkpoint, data, distribution, precision, tape, tracing  # noqa: F401
