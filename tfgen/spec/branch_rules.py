"""Checks of a layer-list model's branches (each input's own layers) and their merge."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec import catalog
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec


def _branches_and_merge(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`branches` name inputs of a layer-list model; `merge` joins several inputs."""
    model = spec.model
    if model.builder is not None and model.branches:
        yield doc.issue(
            ("model", "branches"), "a `builder` model takes no `branches` (it builds every input's layers)", key=True
        )
    if model.builder is not None and "merge" in model.model_fields_set:
        yield doc.issue(("model", "merge"), "a `builder` model takes no `merge` (it joins its inputs itself)", key=True)
    for name in model.branches:
        if name not in model.inputs:
            yield doc.issue(
                ("model", "branches", name),
                f"`{name}` is not an input{catalog.did_you_mean(name, model.inputs)} (inputs: {', '.join(model.inputs)})",
                key=True,
            )
    if model.builder is None and "merge" in model.model_fields_set and len(model.inputs) < 2:
        yield doc.issue(
            ("model", "merge"), "`merge` joins several inputs; this model has one (remove `merge`)", key=True
        )


def _unbranched_strings(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Strings cannot be merged with anything: a string input of several needs its branch."""
    model = spec.model
    if model.builder is not None or len(model.inputs) < 2:
        return
    for name, item in model.inputs.items():
        if item.dtype == "string" and name not in model.branches:
            yield doc.issue(
                ("model", "inputs", name),
                f"`{name}` holds strings, which cannot be merged with the other inputs: give it a branch that "
                "turns them into numbers (`StringLookup`, `TextVectorization` or `Hashing`)",
                key=True,
            )


# Each check and the top-level sections it reads (see tfgen.spec.crosscheck.CHECKS).
BRANCH_CHECKS = (
    (_branches_and_merge, {"model"}),
    (_unbranched_strings, {"model"}),
)
