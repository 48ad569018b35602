"""How the script reads an `npz` source: its own `load_npz` (source.py.jinja)."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import Part, SourceView
from tfgen.sources.npz.model import NpzSource


def view(source: NpzSource, part: Part, spec=None) -> SourceView:
    return SourceView("npz", part, path=literal(source.path), x=literal(source.x), y=literal(source.y))


def read_call(s: SourceView, weights: str) -> str:
    return f"load_npz({s.path}, {s.x}, {s.y}{weights})"


def description(source: NpzSource) -> str:
    return "arrays from an .npz file"
