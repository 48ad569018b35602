"""Checks of a spec's strings: string inputs and the sources and steps that carry them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec
from tfgen.spec.support import string_inputs


def _strings_under_xla(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    strings = string_inputs(spec)
    if spec.train.jit_compile is True and strings:
        yield doc.issue(
            ("train", "jit_compile"),
            f"XLA has no string type and the input `{strings[0]}` holds strings; use `auto` (off here) or `false`",
        )


def _strings_in_tflite(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    strings = string_inputs(spec)
    if "tflite" in spec.checkpoint.export and strings:
        yield doc.issue(
            ("checkpoint", "export", spec.checkpoint.export.index("tflite")),
            f"TFLite's built-in ops have no strings and the input `{strings[0]}` holds them; "
            "export `saved_model` for this model",
        )


def _record_strings(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """A record's string feature fills a string input; a string input reads a string feature."""
    parts = [("train", spec.data.train), ("validation", spec.data.validation), ("test", spec.data.test)]
    for part, pipeline in parts:
        if pipeline is not None and pipeline.source.type == "tfrecord":
            yield from _record_features(spec, doc, ("data", part, "source"), pipeline.source)


def _record_features(spec: Spec, doc: Located, loc: Loc, source: Any) -> Iterator[SpecIssue]:
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


# Each check and the top-level sections it reads (see tfgen.spec.crosscheck.CHECKS).
STRING_CHECKS = (
    (_strings_under_xla, {"train", "model"}),
    (_strings_in_tflite, {"checkpoint", "model"}),
    (_record_strings, {"data", "model", "targets"}),
)
