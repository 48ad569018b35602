"""How the script reads a `keras` source: its own `load_keras_dataset` (source.py.jinja)."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import Part, SourceView
from tfgen.sources.keras.model import KerasSource


def view(source: KerasSource, part: Part, spec=None) -> SourceView:
    return SourceView("keras", part, dataset=literal(source.dataset), split=literal(source.split))


def read_call(s: SourceView, weights: str) -> str:
    return f"load_keras_dataset({s.dataset}, {s.split})"


def description(source: KerasSource) -> str:
    return f"`keras.datasets.{source.dataset}` ({source.split} split)"
