"""Static checks of a `tfds` source against the model: what fills each input and target, and how
examples are held out (a `tfds` source streams, so TFDS's split slicing does it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue
from tfgen.sources.mapping import array_names

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    inputs, targets = len(spec.model.inputs), len(spec.targets)
    if source.x is not None:  # x and y, or neither
        yield from array_names(spec, doc, loc, source)
    elif inputs > 1 or targets > 1:
        yield doc.issue(
            loc,
            f"the dataset's supervised pair fills one input and one target, the model has {inputs} input(s) "
            f"and {targets} target(s): name each one's feature with `x` and `y` (`{{name: feature}}`)",
        )
    if loc[1] == "train":
        yield from _held_out(spec, doc)


def _held_out(spec, doc: Located) -> Iterator[SpecIssue]:
    if spec.data.validation_split is not None:
        yield doc.issue(
            ("data", "validation_split"),
            "`validation_split` needs an in-memory source; a `tfds` source streams: hold out part of a split "
            "with TFDS's slicing (`split: train[:80%]`, and `train[80%:]` as `data.validation`)",
        )
    if spec.data.test_split is not None:
        yield doc.issue(
            ("data", "test_split"),
            "`test_split` needs an in-memory source; a `tfds` source streams: hold out part of a split "
            "with TFDS's slicing (`split: train[:90%]`, and `train[90%:]` as `data.test`)",
        )
