"""`validate --deep` on `algorithm: {type: contrastive}`: the encoder built as the script builds
it (no loss per output: the algorithm makes its loss); each view's random layers called on the
encoder's inputs (and keeping their shapes), the projection head on the representation, SimSiam's
predictor on the projection (its output as wide as the projection's), each failure located at
its `algorithm.<part>.<index>`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfgen.check.deep_networks import _NetworkDeep
from tfgen.errors import SpecIssue
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec
from tfgen.spec.models.algorithms import Supervised


def deep_contrastive(keras, doc: Located, spec: Spec, spec_dir: Path, trust: bool) -> tuple[list[SpecIssue], str]:
    """The encoder's, the views' and the heads' issues, and the encoder's summary table."""
    checker = _NetworkDeep(keras, doc, spec.model_copy(update={"algorithm": Supervised()}), spec_dir, trust)
    summary = checker.run()
    encoder = checker.built_model
    if encoder is not None:
        _views(checker, spec, encoder)
        representation = encoder.output[next(iter(spec.model.outputs))]
        projection = _head(checker, spec.algorithm.projection, "projection", representation)
        if projection is not None and spec.algorithm.predictor:
            _predictor(checker, spec, projection)
    return checker.issues, summary


def _views(checker: _NetworkDeep, spec: Spec, encoder: Any) -> None:
    """Each view layer on each of the encoder's inputs, in training mode, keeping its shape."""
    for index, item in enumerate(spec.algorithm.views):
        loc = ("algorithm", "views", index)
        layer = checker.layer(item, loc)
        if layer is None:
            continue
        for name, x in encoder.input.items():
            y = checker.apply(layer, x, loc, item.type, training=True)
            if y is not None and tuple(y.shape) != tuple(x.shape):
                checker.fail(
                    loc,
                    f"{item.type} turns the input `{name}` of shape {list(x.shape[1:])} into {list(y.shape[1:])}: "
                    "a view keeps the shape the encoder takes",
                )


def _head(checker: _NetworkDeep, items: list, part: str, x: Any) -> Any:
    """The head's layers applied in turn to `x` (None where one fails)."""
    for index, item in enumerate(items):
        loc = ("algorithm", part, index)
        layer = checker.layer(item, loc)
        if layer is None or x is None:
            return None
        x = checker.apply(layer, x, loc, item.type)
    return x


def _predictor(checker: _NetworkDeep, spec: Spec, projection: Any) -> None:
    """SimSiam compares each prediction with a projection: the same width."""
    prediction = _head(checker, spec.algorithm.predictor, "predictor", projection)
    if prediction is not None and tuple(prediction.shape[1:]) != tuple(projection.shape[1:]):
        checker.fail(
            ("algorithm", "predictor"),
            f"the predictor's output is {list(prediction.shape[1:])} per example, the projection's "
            f"{list(projection.shape[1:])}: SimSiam compares the two",
        )
