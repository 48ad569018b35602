"""Planning the parts of `data` beyond the training and validation pipelines: the test data (a
source of its own or a held-out split) and how load_data holds rows out."""

from __future__ import annotations

from typing import Any

from tfgen.generate.views import HeldOut, Part
from tfgen.sources import unit_of
from tfgen.spec.models import Spec
from tfgen.spec.names import has_validation

# The names a script binds for its test data (added to script_names.SCRIPT_NAMES).
TEST_NAMES = frozenset(["TEST_SPLIT", "TEST_BATCH_SIZE", "SYNTHETIC_TEST_EXAMPLES", "test_pipeline"])


def data_sources(spec: Spec) -> list[Any]:
    """The sources of the training, validation and test data, in that order."""
    parts = [spec.data.train, spec.data.validation, spec.data.test]
    return [part.source for part in parts if part is not None]


def holds_out_rows(spec: Spec) -> bool:
    """Whether `rt.held_out` splits the training source (else `rt.split_arrays`, or nothing).

    It holds out test rows, and splits a source that may stream rows (a csv file) by the same seeded rows.
    """
    data = spec.data
    split = data.validation_split is not None or data.test_split is not None
    return data.test_split is not None or (split and unit_of(data.train.source).rows_held_out)


def test_fields(spec: Spec, source_view) -> dict[str, Any]:
    """The DataView fields of the test data (`source_view(source, part)`: a source's view)."""
    data = spec.data
    validation_batch = (data.validation.batch_size if data.validation else None) or data.train.batch_size
    fields: dict[str, Any] = {"test_split": data.test_split, "held_out": _held_out_view(spec)}
    if data.test is not None:
        fields["test"] = source_view(data.test.source, Part.TEST)
    if data.test is None and data.test_split is None:
        return fields
    batch = (data.test.batch_size if data.test else None) or validation_batch
    fields["has_test"] = True
    fields["test_batch_size"] = batch
    synthetic = data.test is not None and unit_of(data.test.source).drawn
    fields["synthetic_test"] = data.test.source.examples if synthetic else 4 * batch
    return fields


def _held_out_view(spec: Spec) -> HeldOut | None:
    if not holds_out_rows(spec):
        return None
    data = spec.data
    names = ["train", "validation" if data.validation_split else "_", "test" if data.test_split else "_"]
    arguments = []
    if data.validation_split:
        arguments.append("validation=VALIDATION_SPLIT")
    if data.test_split:
        arguments.append("test=TEST_SPLIT")
    if data.stratify:
        arguments.append("stratify=True")
    return HeldOut(names=", ".join(names), arguments=", ".join(arguments))


def load_data_returns(spec: Spec, split_function: str) -> str:
    """What load_data returns: `train, validation[, test]`, the validation rows split off the
    training ones (`validation_split` without a test part), or `None` for no validation."""
    data = spec.data
    stratify = ", stratify=True" if data.stratify else ""
    if data.test is not None or data.test_split is not None:
        return f"train, {'validation' if has_validation(spec) else 'None'}, test"
    if holds_out_rows(spec):
        return "train, validation"
    if data.validation_split:
        return f"rt.{split_function}(train, VALIDATION_SPLIT, SEED{stratify})"
    return "train, validation" if data.validation is not None else "train, None"
