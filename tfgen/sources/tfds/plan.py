"""How the script reads a `tfds` source: `rt.load_tfds(name, split, ...)` and the options the spec sets."""

from __future__ import annotations

from tfgen.generate.code import keywords, literal
from tfgen.generate.source_plan import more_keywords
from tfgen.generate.views import Part, SourceView
from tfgen.sources.tfds.model import TfdsSource


def view(source: TfdsSource, part: Part, spec=None) -> SourceView:
    """The dataset's name and split, and the options the spec sets (`data_dir`, `x`, `y`)."""
    options = {"data_dir": source.data_dir, "x": source.x, "y": source.y}
    given = keywords({key: value for key, value in options.items() if value is not None})
    return SourceView("tfds", part, dataset=literal(source.name), split=literal(source.split), kwargs=given)


def read_call(s: SourceView, weights: str) -> str:
    return f"rt.load_tfds({s.dataset}, {s.split}, INPUTS, TARGETS{more_keywords(s.kwargs)})"


def description(source: TfdsSource) -> str:
    return f"TensorFlow Datasets `{source.name}` ({source.split} split)"
