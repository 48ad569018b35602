"""`--deep` and `train.phases`: a phase whose unfrozen layers hold no weights (only Dropout,
Activation, ...) trains nothing; validation refuses a phase that freezes every layer item, the
built layers show the rest."""

from __future__ import annotations

from typing import Any

from tfgen.spec.finetune_rules import frozen_items, model_items, trains_nothing
from tfgen.spec.loader import Loc


def phase_problems(spec: Any, built: dict[Loc, Any]) -> list[tuple[Loc, str]]:
    """(location, message) of each phase that leaves only layers without trainable weights
    (`built`: each layer item's built layer, by location; a backbone's is its model)."""
    if spec.model.builder is not None or not spec.train.phases:
        return []
    items = [loc for loc, _ in model_items(spec)]
    problems = []
    for i, phase in enumerate(spec.train.phases):
        frozen = frozen_items(spec, phase.frozen)
        if set(items) <= frozen:
            continue  # validation refuses it already
        left = [built.get(loc) for loc in items if loc not in frozen]
        if all(layer is not None and not _weights(layer) for layer in left):
            problems.append((("train", "phases", i, "frozen"), trains_nothing(spec, i)))
    return problems


def _weights(layer: Any) -> list:
    """A built layer's trainable weights (a backbone's: its model's)."""
    return getattr(getattr(layer, "model", layer), "trainable_weights", [])
