"""`--deep` on the merge of a model's inputs (or their branches) into the trunk: the step of the
planner's wiring (tfgen.generate.wiring) that the script's merge line comes from. A merge that
cannot join what reaches it is located at the branch (or the input) that does not fit."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tfgen.check.deep_heads import _same_shape, _shape
from tfgen.generate.wiring import MERGE_LAYERS, Step
from tfgen.spec.loader import Loc


def merge(deep: Any, step: Step, ends: dict[str, Any]) -> Any:
    """The merge step's tensor (None, with an issue, when it cannot be built): `ends` holds what
    reaches it, by input name. `deep` is the deep checker (tfgen.check.deep._Deep)."""
    if any(tensor is None for tensor in ends.values()):
        return None  # a branch failed: reported there
    model = deep.spec.model
    problem = merge_problem(model.merge, ends, set(model.branches))
    if problem is not None:
        name, message = problem
        deep.issues.append(deep.doc.issue(_where(name, model.branches), message, key=True))
        return None
    layer = MERGE_LAYERS[model.merge]
    merged = deep.evaluate(step.code, step.loc, layer)
    return None if merged is None else deep.apply(merged, list(ends.values()), step.loc, layer)


def _where(name: str, branches: dict) -> Loc:
    return ("model", "branches", name) if name in branches else ("model", "inputs", name)


def merge_problem(merge: str, tensors: dict[str, Any], branched: set[str]) -> tuple[str, str] | None:
    """(the input that does not fit, why) when `merge` cannot join these tensors; None: it can.
    Concatenation needs equal ranks and equal dimensions but the last; the others equal shapes."""
    shapes = {name: tuple(tensor.shape[1:]) for name, tensor in tensors.items()}
    concatenate = merge == "concatenate"

    def what(name: str) -> str:
        return f"the `{name}` branch" if name in branched else f"input `{name}`"

    for name, tensor in tensors.items():
        if str(tensor.dtype) == "string":
            return name, f"{what(name)} gives strings, which cannot be merged: give it layers that give numbers"
        if concatenate and not shapes[name]:
            return (
                name,
                f"`concatenate` joins on the last axis, but {what(name)} gives one value per example (shape ())",
            )
    fits = _concatenable if concatenate else _same_shape
    reference = _reference(shapes, branched, concatenate)
    rule = (
        "`concatenate` needs equal ranks and equal dimensions but the last"
        if concatenate
        else f"`{merge}` needs equal shapes"
    )
    for name, shape in shapes.items():
        if not fits(shape, shapes[reference]):
            return name, (
                f"{rule}: {what(name)} gives {_shape(shape)} per example, "
                f"{what(reference)} gives {_shape(shapes[reference])}"
            )
    return None


def _reference(shapes: dict[str, tuple], branched: set[str], concatenate: bool) -> str:
    """The input whose shape the others are held to: the most common shape (for concatenation,
    the rank and all but the last dimension), else an input without a branch (its shape is the
    data's), else the first."""

    def key(name: str) -> tuple:
        return (len(shapes[name]), shapes[name][:-1]) if concatenate else shapes[name]

    counts = Counter(key(name) for name in shapes)
    order = {name: index for index, name in enumerate(shapes)}
    return max(shapes, key=lambda name: (counts[key(name)], name not in branched, -order[name]))


def _concatenable(shape: tuple, other: tuple) -> bool:
    return len(shape) == len(other) and _same_shape(shape[:-1], other[:-1])
