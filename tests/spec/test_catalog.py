"""The committed Keras catalog matches the installed Keras (re-extracted, compared in full)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

from tfgen.spec import catalog


@pytest.mark.slow  # imports Keras and probes its constructors (about 9 s)
def test_catalog_matches_installed_keras():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "extract_keras_catalog.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_catalog_knows_what_the_example_specs_use():
    assert "units" in catalog.classes("layers")["Dense"]["params"]
    assert catalog.classes("layers")["Dense"]["required"] == ["units"]
    assert catalog.classes("metrics")["SparseCategoricalAccuracy"]["default_name"] == "sparse_categorical_accuracy"
    assert catalog.classes("metrics")["AUC"]["default_name"] == "auc"  # not the name of the extractor's tenth AUC
    assert "first_decay_steps" in catalog.classes("schedules")["CosineDecayRestarts"]["params"]
    assert catalog.nested_kind("kernel_regularizer", "L2") == "regularizers"
    assert catalog.nested_kind("learning_rate", "CosineDecay") == "schedules"
