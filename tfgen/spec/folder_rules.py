"""Checks of the folder sources (`image_folder`, `text_folder`) against the model's input and
the class target they fill (the folders themselves are checked by `validate --deep`)."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec

FOLDER_SOURCES = ("image_folder", "text_folder")
CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
IMAGE_DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def folder_sources(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Each folder source fills one input and one class target of shape `[]`; an image folder's
    input is `[height, width, channels]` (uint8 or float), a text folder's a `string` of shape `[]`."""
    seen: set[tuple] = set()
    for loc, source in _folder_sources(spec):
        for issue in _one_source(spec, doc, loc, source):
            key = (issue.field, issue.message)
            if key not in seen:  # the training and validation folders may both say it
                seen.add(key)
                yield issue


def _folder_sources(spec: Spec):
    parts = [("train", spec.data.train), ("validation", spec.data.validation)]
    for part, pipeline in parts:
        if pipeline is not None and pipeline.source.type in FOLDER_SOURCES:
            yield ("data", part, "source"), pipeline.source


def _one_source(spec: Spec, doc: Located, loc: tuple, source) -> Iterator[SpecIssue]:
    kind = "an `image_folder` source" if source.type == "image_folder" else "a `text_folder` source"
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
    for name, item in spec.model.inputs.items():
        if source.type == "image_folder":
            yield from _image_input(doc, loc, source, name, item)
        else:
            yield from _text_input(doc, name, item)


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


def _text_input(doc: Located, name: str, item) -> Iterator[SpecIssue]:
    if item.dtype != "string" or item.shape:
        yield doc.issue(
            ("model", "inputs", name),
            f"a `text_folder` source gives one text per example: the input needs `dtype: string` and "
            f"shape [], not {item.dtype} of shape {item.shape}",
        )
