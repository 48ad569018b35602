"""Static checks of a `text_folder` source: it fills one `string` input of shape `[]` and one
class target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue
from tfgen.sources.folders.rules import one_input_one_class

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    yield from one_input_one_class(spec, doc, "a `text_folder` source")
    for name, item in spec.model.inputs.items():
        yield from _text_input(doc, name, item)


def _text_input(doc: Located, name: str, item) -> Iterator[SpecIssue]:
    if item.dtype != "string" or item.shape:
        yield doc.issue(
            ("model", "inputs", name),
            f"a `text_folder` source gives one text per example: the input needs `dtype: string` and "
            f"shape [], not {item.dtype} of shape {item.shape}",
        )
