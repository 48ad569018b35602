"""From a valid spec to files: the decisions, the typed view, the templates, rendering,
the checks every generated file passes, and writing them all or none."""

from pathlib import Path


def templates_dir() -> Path:
    """The Jinja templates, inside the package (and so inside the wheel)."""
    return Path(__file__).with_name("templates")


def sources_dir() -> Path:
    """The data sources' units, whose `<type>/source.py.jinja` the data template includes."""
    return Path(__file__).parent.parent / "sources"
