"""The rules, one module per topic; importing this package registers every rule."""

from tfgen.lint.rules import checkpoint, data, distribution, precision, tape, tracing

__all__ = ["checkpoint", "data", "distribution", "precision", "tape", "tracing"]
