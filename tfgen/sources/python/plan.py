"""How the script reads a `python` source: `rt.from_function(<function>, ...)`."""

from __future__ import annotations

from tfgen.generate.code import keywords, literal
from tfgen.generate.source_plan import more_keywords
from tfgen.generate.views import Part, SourceView
from tfgen.sources.python.model import PythonSource


def view(source: PythonSource, part: Part, spec=None) -> SourceView:
    return SourceView("python", part, call=literal(source.function), kwargs=keywords(source.kwargs))


def read_call(s: SourceView, weights: str) -> str:
    return f"rt.from_function({s.call}, INPUTS, TARGETS, SPEC_DIR{more_keywords(s.kwargs)})"


def description(source: PythonSource) -> str:
    return f"`{source.function}`"
