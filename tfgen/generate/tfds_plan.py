"""Planning a `tfds` source: the call that loads it (`rt.load_tfds`) and its arguments."""

from __future__ import annotations

from tfgen.generate.code import keywords, literal
from tfgen.generate.views import Part, SourceType, SourceView
from tfgen.spec.models.data import TfdsSource


def tfds_view(source: TfdsSource, part: Part) -> SourceView:
    """The dataset's name and split, and the options the spec sets (`data_dir`, `x`, `y`)."""
    options = {"data_dir": source.data_dir, "x": source.x, "y": source.y}
    given = keywords({key: value for key, value in options.items() if value is not None})
    return SourceView(SourceType.TFDS, part, dataset=literal(source.name), split=literal(source.split), kwargs=given)
