"""A rule two sources share: `x` and `y` name one array (or feature) per input and per target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located


def array_names(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    """An npz or tfds source's `x` and `y` name one array per input and per target."""
    for field, names, what in (("x", list(spec.model.inputs), "input"), ("y", list(spec.targets), "target")):
        value = getattr(source, field)
        if isinstance(value, str):
            if len(names) > 1:
                yield doc.issue((*loc, field), f"one array for {len(names)} {what}s: map each {what} to an array name")
        elif set(value) != set(names):
            yield doc.issue((*loc, field), f"maps {sorted(value)}, the {what}s are {sorted(names)}")
