"""Checks of `tfds` sources against the model: what fills each input and target, and how
examples are held out (a `tfds` source streams, so TFDS's split slicing does it)."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec


def tfds_sources(spec: Spec) -> Iterator[tuple[Loc, object]]:
    """(location, source) of the spec's `tfds` sources, training first."""
    parts = [("train", spec.data.train), ("validation", spec.data.validation), ("test", spec.data.test)]
    for part, pipeline in parts:
        if pipeline is not None and pipeline.source.type == "tfds":
            yield ("data", part, "source"), pipeline.source


def check_tfds(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    inputs, targets = len(spec.model.inputs), len(spec.targets)
    for loc, source in tfds_sources(spec):
        if source.x is None and (inputs > 1 or targets > 1):
            yield doc.issue(
                loc,
                f"the dataset's supervised pair fills one input and one target, the model has {inputs} input(s) "
                f"and {targets} target(s): name each one's feature with `x` and `y` (`{{name: feature}}`)",
            )
    if spec.data.train.source.type == "tfds" and spec.data.validation_split is not None:
        yield doc.issue(
            ("data", "validation_split"),
            "`validation_split` needs an in-memory source; a `tfds` source streams: hold out part of a split "
            "with TFDS's slicing (`split: train[:80%]`, and `train[80%:]` as `data.validation`)",
        )
    if spec.data.train.source.type == "tfds" and spec.data.test_split is not None:
        yield doc.issue(
            ("data", "test_split"),
            "`test_split` needs an in-memory source; a `tfds` source streams: hold out part of a split "
            "with TFDS's slicing (`split: train[:90%]`, and `train[90%:]` as `data.test`)",
        )
