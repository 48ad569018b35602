"""Checks of the folder sources (`image_folder`, `text_folder`) against the model's input and
the class target they fill, shared by the two units (the folders themselves are checked by
`validate --deep`: folders/deep.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue

if TYPE_CHECKING:
    from tfgen.spec.loader import Located
    from tfgen.spec.models import Spec


def one_input_one_class(spec: Spec, doc: Located, kind: str) -> Iterator[SpecIssue]:
    """A folder source (`kind`, as a message names it) fills one input and one class target of shape `[]`."""
    if len(spec.model.inputs) != 1:
        names = ", ".join(spec.model.inputs)
        yield doc.issue(
            ("model", "inputs"), f"{kind} fills one input; the model has {len(spec.model.inputs)} ({names})"
        )
    if len(spec.targets) != 1:
        names = ", ".join(spec.targets)
        yield doc.issue(("targets",), f"{kind} fills one class target; there are {len(spec.targets)} ({names})")
    for name, target in spec.targets.items() if len(spec.targets) == 1 else ():
        if target.shape or not target.classes:
            yield doc.issue(
                ("targets", name),
                f"{kind} gives its sub-folders' class ids: the target needs shape [] and `classes`",
            )
