"""Static checks of an `image_folder` source: it fills one input of `[height, width, channels]`
(uint8 or float) and one class target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfgen.errors import SpecIssue
from tfgen.sources.folders.rules import one_input_one_class

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located

CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
IMAGE_DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def rules(spec, doc: Located, loc: Loc, source) -> Iterator[SpecIssue]:
    yield from one_input_one_class(spec, doc, "an `image_folder` source")
    for name, item in spec.model.inputs.items():
        yield from _image_input(doc, loc, source, name, item)


def _image_input(doc: Located, loc: tuple, source, name: str, item) -> Iterator[SpecIssue]:
    height, width = source.image_size
    shape = [height, width, CHANNELS[source.color_mode]]
    if item.shape != shape:
        yield doc.issue(
            ("model", "inputs", name, "shape"),
            f"the `image_folder` source ({'.'.join(loc)}) gives images of shape {shape} "
            f"(`image_size` and `color_mode: {source.color_mode}`); the input is declared {item.shape}",
        )
    if item.dtype not in IMAGE_DTYPES:
        yield doc.issue(
            ("model", "inputs", name, "dtype"),
            f"an `image_folder` source gives pixels 0-255 (not rescaled) as uint8 or a float dtype, not {item.dtype}",
        )
