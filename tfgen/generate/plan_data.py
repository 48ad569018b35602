"""Planning the parts of `data` beyond the training and validation pipelines: csv sources and
the test data (a source of its own or a held-out split)."""

from __future__ import annotations

from typing import Any

from tfgen.generate.code import literal
from tfgen.generate.views import HeldOut, Part, SourceType, SourceView
from tfgen.spec.models import Spec
from tfgen.spec.names import has_validation

# The names a script binds for its test data (added to script_names.SCRIPT_NAMES).
TEST_NAMES = frozenset(["TEST_SPLIT", "TEST_BATCH_SIZE", "SYNTHETIC_TEST_EXAMPLES", "test_pipeline"])


def data_sources(spec: Spec) -> list[Any]:
    """The sources of the training, validation and test data, in that order."""
    parts = [spec.data.train, spec.data.validation, spec.data.test]
    return [part.source for part in parts if part is not None]


def csv_view(source: Any, part: Part, spec: Spec) -> SourceView:
    """How `rt.read_csv` reads a csv source: its options that are not at their defaults."""
    options = {"delimiter": source.delimiter, "na_values": tuple(source.na_values)}
    if part is Part.TRAIN:  # `in_memory: false` streams the file, `true` reads it; auto: by its size
        options["stream"] = {True: False, False: True}.get(spec.data.train.in_memory)
        # A file that streams is split afterwards by rt.held_out, which needs its rows.
        options["rows"] = _held_out(spec)
        options["sample_weight"] = spec.data.train.sample_weight  # the column of each example's weight
    defaults = {"delimiter": ",", "na_values": (), "stream": None, "rows": False, "sample_weight": None}
    return SourceView(
        SourceType.CSV,
        part,
        path=literal(source.path),
        x=literal(source.x),
        y=literal(source.y),
        options=[f"{name}={literal(value)}" for name, value in options.items() if value != defaults[name]],
    )


def _held_out(spec: Spec) -> bool:
    """Whether `rt.held_out` splits the training source (else `rt.split_arrays`, or nothing).

    It holds out test rows, and splits a csv file, which may stream, by the same seeded rows.
    """
    data = spec.data
    split = data.validation_split is not None or data.test_split is not None
    return data.test_split is not None or (split and data.train.source.type == "csv")


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
    synthetic = data.test is not None and data.test.source.type == "synthetic"
    fields["synthetic_test"] = data.test.source.examples if synthetic else 4 * batch
    return fields


def _held_out_view(spec: Spec) -> HeldOut | None:
    if not _held_out(spec):
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
    if _held_out(spec):
        return "train, validation"
    if data.validation_split:
        return f"rt.{split_function}(train, VALIDATION_SPLIT, SEED{stratify})"
    return "train, validation" if data.validation is not None else "train, None"
