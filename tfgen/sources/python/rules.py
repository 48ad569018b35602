"""Static checks of a `python` source: a Keras folder loader called directly keeps exact resume
only when tfgen shuffles and batches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located

# Keras's folder loaders return a tf.data.Dataset that, by default, reshuffles its files on every
# iteration and comes in batches of 32.
DATASET_LOADERS = ("image_dataset_from_directory", "text_dataset_from_directory", "audio_dataset_from_directory")


def _dataset_loader(source) -> str | None:
    """The Keras folder loader a `python` source calls directly, if it is one."""
    module, _, name = source.function.partition(":")
    keras_module = module.split(".")[0] == "keras" or module.startswith(("tensorflow.keras", "tf.keras"))
    return name if keras_module and name in DATASET_LOADERS else None


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    """A Keras folder loader as a source keeps exact resume only when tfgen shuffles and batches."""
    loader = _dataset_loader(source)
    if loader is None:
        return
    kwargs = source.kwargs
    if loc[1] == "train" and kwargs.get("shuffle", True) is not False:
        yield doc.issue(
            (*loc, "function"),
            f"`{loader}` reshuffles its files on every iteration by default, so "
            "a resumed run would differ: add `shuffle: false` to `kwargs` and let tfgen shuffle "
            "(`data.train.shuffle`, seeded per epoch)",
        )
    if kwargs.get("batch_size", 32) is not None:
        yield doc.issue(
            (*loc, "function"),
            f"`{loader}` gives batches (of 32 by default): add `batch_size: null` to `kwargs` (tfgen batches)",
        )
    yield from _own_split(doc, loc, loader, kwargs)
    for split, part in (("validation_split", "validation"), ("test_split", "test")):
        if loc[1] == "train" and getattr(spec.data, split) is not None:
            yield doc.issue(
                ("data", split),
                f"`{split}` needs arrays; `{loader}` returns a "
                f"tf.data.Dataset: give the held-out examples as `data.{part}`",
            )


def _own_split(doc: Located, loc: Loc, loader: str, kwargs: dict) -> Iterator[SpecIssue]:
    for argument in ("validation_split", "subset"):
        if argument in kwargs:
            yield doc.issue(
                (*loc, "kwargs", argument),
                f"`{loader}`'s `{argument}` without its shuffle holds "
                "out the last files in sorted order (whole classes): give the held-out examples as "
                "`data.validation` (a folder of their own)",
            )
