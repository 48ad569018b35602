"""A `synthetic` source is drawn (`rt.synthetic_arrays`, the part's draw line), never read."""

from __future__ import annotations

from tfgen.generate.views import Part, SourceView
from tfgen.sources.synthetic.model import SyntheticSource


def view(source: SyntheticSource, part: Part, spec=None) -> SourceView:
    return SourceView("synthetic", part)


def read_call(s: SourceView, weights: str) -> str:
    return ""  # drawn, never read


def description(source: SyntheticSource) -> str:
    return f"{source.examples} random examples"
