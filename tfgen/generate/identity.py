"""What a run's checkpoints depend on: the sha256 of the spec without the edits a resume
takes (the script's STATE_SHA256), and the data files whose fingerprints a run records."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tfgen.sources import unit_of
from tfgen.spec.models import Spec

# The spec fields a resumed run may change: none changes what the saved state means (the
# weights, the optimizer's slots, the trackers, the data's order), so a checkpoint written
# before the edit goes on after it. Every other field is part of STATE_SHA256: changing it
# refuses the resume (--fresh starts over). docs/generated-script.md lists both.
RESUMABLE_FIELDS = (
    ("extends",),
    ("name",),
    ("output_dir",),
    ("train", "epochs"),
    ("train", "early_stopping", "patience"),
    ("checkpoint", "every_epochs"),
    ("checkpoint", "every_steps"),
    ("checkpoint", "keep"),
    ("checkpoint", "resume"),
    ("checkpoint", "export"),
    ("logging",),
    ("debug",),
    ("sweep",),  # read by `tfgen sweep` only: a trial's spec has none
)


def state_sha256(spec: Spec) -> str:
    """The sha256 of the spec (every default filled in) less its RESUMABLE_FIELDS."""
    data = spec.model_dump(mode="json")  # without the default algorithm: Spec._dump
    for path in RESUMABLE_FIELDS:
        _remove(data, path)
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _remove(data: dict[str, Any], path: tuple[str, ...]) -> None:
    """Remove the field at `path` (a missing or null section has nothing to remove)."""
    *parents, last = path
    for key in parents:
        data = data.get(key)
        if not isinstance(data, dict):
            return
    data.pop(last, None)


def data_files(spec: Spec) -> list[str]:
    """The files (or glob patterns) the spec's npz, csv and tfrecord sources read, in order.

    A `python` source's files and a `keras` dataset's download are not known here: they
    are not fingerprinted.
    """
    parts = [spec.data.train, spec.data.validation, spec.data.test]
    return [file for part in parts if part is not None for file in source_files(part.source)]


def source_files(source: Any) -> list[str]:
    """The file (or glob pattern) an npz, csv or tfrecord source reads (none for others)."""
    field = unit_of(source).file_field
    return [getattr(source, field)] if field else []
