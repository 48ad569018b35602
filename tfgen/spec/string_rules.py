"""Checks of a spec's strings: string inputs and the steps that carry them (a tfrecord source's
string features: tfgen/sources/tfrecord/rules.py)."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Located
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


# Each check and the top-level sections it reads (see tfgen.spec.crosscheck.CHECKS).
STRING_CHECKS = (
    (_strings_under_xla, {"train", "model"}),
    (_strings_in_tflite, {"checkpoint", "model"}),
)
