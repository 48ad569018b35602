"""How the script reads a `tfrecord` source: its own `load_tfrecord` (source.py.jinja)."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import Part, SourceView
from tfgen.sources.tfrecord.model import TFRecordSource


def view(source: TFRecordSource, part: Part, spec=None) -> SourceView:
    features = {name: (tuple(f.shape), f.dtype) for name, f in source.features.items()}
    return SourceView(
        "tfrecord",
        part,
        path=literal(source.files),
        features=literal(features),
        compression=literal(source.compression),
    )


def read_call(s: SourceView, weights: str) -> str:
    return f"load_tfrecord({s.path}, {s.features}, {s.compression})"


def description(source: TFRecordSource) -> str:
    return "TFRecord files"
