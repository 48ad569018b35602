"""Checks of class weights (`losses.<output>.class_weight`) and example weights
(`data.train.sample_weight`) against the targets and the training source (a part of crosscheck)."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.sources import SOURCES
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec
from tfgen.spec.models.model import TargetSpec

# Sources that name an array or a column per example.
SAMPLE_WEIGHT_SOURCES = tuple(name for name, unit in SOURCES.items() if unit.example_weights)


def _class_weights(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """A class weight needs a class target whose labels give one class per example, and names
    only its classes."""
    for output, loss in spec.losses.items():
        target = spec.targets.get(output)
        if loss.class_weight is None or target is None:
            continue
        loc = ("losses", output, "class_weight")
        problem = _target_problem(output, target)
        if problem:
            yield doc.issue(loc, problem, key=True)
        elif isinstance(loss.class_weight, dict):
            for key in loss.class_weight:
                problem = _key_problem(key, output, target)
                if problem:
                    yield doc.issue((*loc, key), problem, key=True)


def _target_problem(output: str, target: TargetSpec) -> str | None:
    """Why the target's labels cannot be weighted by class (None: they can)."""
    classes = target.class_count
    if classes is None:
        return f"class weights need a class target: `targets.{output}` has no `classes`"
    if target.shape in ([], [1]) or target.shape == [classes]:
        return None
    shapes = f"[] or [1] (a class id or a 0/1 label per example), or [{classes}] (one-hot)"
    return f"class weights need one class per example: `targets.{output}` has shape {target.shape}, not {shapes}"


def _key_problem(key: int | str, output: str, target: TargetSpec) -> str | None:
    """Why `key` is not a class of the target (None: it is one)."""
    classes = target.class_count
    names = target.class_names
    if isinstance(key, int):
        if 0 <= key < classes:
            return None
        return f"class {key} is not a class of `targets.{output}`: its ids are 0 to {classes - 1}"
    if names and key in names:
        return None
    if names:
        return f"`{key}` is not a class of `targets.{output}`: its classes are {', '.join(names)}"
    return f"`{key}` is not a class id: `targets.{output}` names no classes, its ids are 0 to {classes - 1}"


def _sample_weight(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Example weights are an array of an npz source or a column of a csv source."""
    train = spec.data.train
    if train.sample_weight is None or train.source.type in SAMPLE_WEIGHT_SOURCES:
        return
    kinds = " or ".join(f"`{kind}`" for kind in SAMPLE_WEIGHT_SOURCES)
    found = f"the training source is `{train.source.type}`"
    yield doc.issue(
        ("data", "train", "sample_weight"),
        f"example weights are an array or a column of a {kinds} source; {found}",
        key=True,
    )


WEIGHT_CHECKS = (
    (_class_weights, {"losses", "targets"}),
    (_sample_weight, {"data"}),
)
