"""Planning class weights (`losses.<output>.class_weight`) and example weights
(`data.train.sample_weight`): what the templates emit only when the spec asks for them."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import ExampleWeightsView
from tfgen.sources import unit_of
from tfgen.spec.models import Spec


def example_weights_view(spec: Spec) -> ExampleWeightsView:
    """The view of the spec's class and example weights (class names mapped to their ids)."""
    requested = {}
    for output, loss in spec.losses.items():
        if loss.class_weight is not None:
            requested[output] = _by_id(loss.class_weight, spec.targets[output].class_names)
    column = spec.data.train.sample_weight
    return ExampleWeightsView(
        class_weights=literal(requested) if requested else None,
        sample_weight=None if column is None else literal(column),
        npz_weights=column is not None and unit_of(spec.data.train.source).weights_in_script,
        used=bool(requested) or column is not None,
    )


def _by_id(weights: dict | str, names: tuple[str, ...] | None) -> dict[int, float] | str:
    """`weights` keyed by class id (a listed name stands for its id), in id order."""
    if isinstance(weights, str):
        return weights
    ids = {(names.index(key) if isinstance(key, str) else key): value for key, value in weights.items()}
    return dict(sorted(ids.items()))
