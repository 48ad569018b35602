"""Checks of a `csv` source against the model's inputs and targets (run by crosscheck through the registry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfgen.errors import SpecIssue

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located
    from tfgen.spec.models import Spec


def rules(spec: Spec, doc: Located, loc: Loc, source: Any) -> Iterator[SpecIssue]:
    """A csv source's `x` and `y` map every input and target to columns that fill its shape."""
    for field, items, what in (("x", spec.model.inputs, "input"), ("y", spec.targets, "target")):
        value = getattr(source, field)
        if not isinstance(value, dict):
            if len(items) > 1:
                yield doc.issue((*loc, field), f"one entry for {len(items)} {what}s: map each {what} to its column(s)")
                continue
            value = {next(iter(items)): value}
            where = {name: (*loc, field) for name in value}
        elif set(value) != set(items):
            yield doc.issue((*loc, field), f"maps {sorted(value)}, the {what}s are {sorted(items)}")
            continue
        else:
            where = {name: (*loc, field, name) for name in value}
        for name, columns in value.items():
            problem = _columns_problem(name, columns, items[name].shape)
            if problem:
                yield doc.issue(where[name], problem)


def _columns_problem(name: str, columns: str | list[str], shape: list) -> str | None:
    """Why `columns` cannot fill examples of `shape` (one column: `[]` or `[1]`; n columns: `[n]`)."""
    if isinstance(columns, str):
        if shape in ([], [1]):
            return None
        return f"`{name}` has shape {shape}: one column fills shape [] or [1]; give a list of columns for a vector"
    if shape == [len(columns)]:
        return None
    return f"`{name}` has shape {shape}: a list of {len(columns)} columns fills shape [{len(columns)}]"
