"""Static checks of a `tfrecord` source: it describes every input and target, is split by files,
not by rows, and a string feature fills a string input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfgen.errors import SpecIssue
from tfgen.spec import catalog

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    """A tfrecord source describes every input and target, and is split by files, not by rows."""
    for name in [*spec.model.inputs, *spec.targets]:
        if name not in source.features:
            yield doc.issue(
                (*loc, "features"),
                f"no feature describes `{name}`{catalog.did_you_mean(name, source.features)}",
            )
    if loc[1] == "train":
        for split, section in (("validation_split", "validation"), ("test_split", "test")):
            if getattr(spec.data, split) is not None:
                yield doc.issue(
                    ("data", split), f"`{split}` needs an in-memory source; give `data.{section}` for tfrecord files"
                )
    yield from record_strings(spec, doc, loc, source)


def record_strings(spec, doc: Located, loc: Loc, source: Any) -> Iterator[SpecIssue]:
    """A record's string feature fills a string input; a string input reads a string feature."""
    for name, item in spec.model.inputs.items():
        feature = source.features.get(name)
        if feature is None or (feature.dtype == "string") == (item.dtype == "string"):
            continue
        if item.dtype == "string":
            why = f"the input `{name}` holds strings: declare the feature `dtype: string`"
        else:
            why = f"a string feature cannot fill the {item.dtype} input `{name}`: declare the input `dtype: string`"
        yield doc.issue((*loc, "features", name, "dtype"), why)
    for name in spec.targets:
        feature = source.features.get(name)
        if feature is not None and feature.dtype == "string":
            yield doc.issue(
                (*loc, "features", name, "dtype"),
                f"string labels in TFRecord files are not supported: store the class ids of `{name}` as int64",
            )
