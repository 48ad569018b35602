"""Static checks of an `npz` source: `x` and `y` name one array per input and per target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue
from tfgen.sources.mapping import array_names

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    yield from array_names(spec, doc, loc, source)
