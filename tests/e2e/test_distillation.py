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
from conftest import (
    ROOT,
    assert_one_line_error,
    base_spec,
    build,
    read_history,
    replica_independent_spec,
    run_harness,
    tfgen_here,
)
from test_augmented_resume import (
    EVERY_STEPS,
    MID_EPOCH,
    assert_resumes_exactly,
    augmented_spec,
)

pytestmark = pytest.mark.slow

RUNNER = ROOT / "tests" / "e2e" / "distiller_runner.py"
VECTOR_AUGMENT = [{"type": "GaussianNoise", "stddev": 0.3}]
QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"}
DISTILLATION = {"type": "distillation", "teacher": "teacher.keras", "temperature": 3.0, "student_loss_weight": 0.1}


def vector_model() -> dict:
    """A student for the augmented in-memory resume: noise and dropout in its step."""
    return {
        "inputs": {"features": {"shape": [8]}},
        "layers": [
            {"type": "Dense", "units": 16, "activation": "relu"},
            {"type": "GaussianNoise", "stddev": 0.1},
            {"type": "Dropout", "rate": 0.3},
        ],
        "outputs": {"label": [{"type": "Dense", "units": 3}]},
    }


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


def test_the_digits_teacher_distils_into_a_student_exported_alone(tmp_path):
    """specs/digits.yaml's run exports the teacher where specs/distill.yaml reads it; the student
    logs a finite distillation_loss, and its export is the 16-unit student, nothing of the teacher."""
    import keras

    teacher = run_script(ROOT / "generated" / "digits.py", tmp_path, "--epochs", "2")
    assert teacher.returncode == 0, teacher.stderr[-3000:]
    assert (tmp_path / "runs" / "digits" / "model.keras").is_file()
    student = run_script(ROOT / "generated" / "distill.py", tmp_path, "--epochs", "2")
    assert student.returncode == 0, student.stderr[-3000:]
    rows = read_history(tmp_path / "runs" / "distill")
    assert [row["epoch"] for row in rows] == [1, 2]
    for row in rows:
        for key in ("distillation_loss", "student_loss", "val_distillation_loss", "val_student_loss"):
            assert np.isfinite(row[key]) and row[key] > 0, (key, row)
        assert row["loss"] == pytest.approx(0.1 * row["student_loss"] + 0.9 * row["distillation_loss"], rel=1e-5)
    exported = keras.saving.load_model(tmp_path / "runs" / "distill" / "model.keras")
    assert list(exported.output) == ["digit"] and list(exported.input) == ["pixels"]
    assert [w.shape for w in exported.get_weights()] == [(64, 16), (16,), (16, 10), (10,)]


def test_a_missing_teacher_file_is_one_line_naming_it(tmp_path):
    result = run_script(ROOT / "generated" / "distill.py", tmp_path, "--epochs", "1")
    assert_one_line_error(result, "the teacher model file runs/digits/model.keras does not exist")
    assert not (tmp_path / "runs" / "distill" / "model.keras").exists()


def test_a_teacher_file_keras_cannot_load_is_one_line_naming_it(tmp_path):
    (tmp_path / "teacher.keras").write_text("not a zip archive")
    script = build(tmp_path, distillation_spec())
    result = run_script(script, tmp_path, "--epochs", "1")
    assert_one_line_error(result, "the teacher model file teacher.keras cannot be loaded")


def test_a_teacher_whose_outputs_do_not_fit_is_one_line_naming_both_shapes(tmp_path):
    write_teacher(tmp_path / "teacher.keras", classes=5)
    script = build(tmp_path, distillation_spec())
    result = run_script(script, tmp_path, "--epochs", "1")
    assert_one_line_error(result, "{'label': (None, 5)}", "{'label': (None, 3)}", "do not fit")


def test_validate_deep_names_a_teacher_whose_outputs_do_not_fit_and_passes_a_teacher_still_to_train(
    tmp_path, monkeypatch, capsys
):
    from tfgen.cli import main

    build(tmp_path, distillation_spec())  # writes small.yaml; the teacher does not exist yet
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--deep", "small.yaml"]) == 0, capsys.readouterr().err
    write_teacher(tmp_path / "teacher.keras", classes=5)
    capsys.readouterr()
    assert main(["validate", "--deep", "small.yaml"]) == 2
    line = 1 + (tmp_path / "small.yaml").read_text().splitlines().index("  teacher: teacher.keras")
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"small.yaml:{line}:12: algorithm.teacher: the teacher's outputs "
        "{'label': (None, 5)} do not fit the student's "
        "{'label': (None, 3)} (distilled: outputs of the same names and shapes)"
    )


def test_smoke_trains_a_distillation_spec_whose_teacher_is_still_to_train_with_a_stand_in(tmp_path):
    build(tmp_path, distillation_spec())
    result = tfgen_here("smoke", "small.yaml", "--steps", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "a stand-in teacher: teacher.keras does not exist yet)" in result.stdout
    assert not (tmp_path / "teacher.keras").exists()


@pytest.mark.parametrize(
    "strategy", [{"type": "default"}, {"type": "mirrored", "cpu_replicas": 2}], ids=lambda s: s["type"]
)
def test_a_distillation_run_killed_mid_epoch_resumes_bit_for_bit(tmp_path, strategy):
    """Augmented in the step (in memory), Dropout in the student and the teacher (inference
    mode), on one device and on two mirrored replicas: the resumed run's rows and weights are
    the uninterrupted run's, bit for bit."""
    write_teacher(tmp_path / "teacher.keras")
    source = {"type": "synthetic", "examples": 48}
    spec = augmented_spec(source, vector_model(), VECTOR_AUGMENT, in_memory=True)
    spec["algorithm"] = DISTILLATION
    spec["checkpoint"] = EVERY_STEPS
    spec["strategy"] = strategy
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH)


def test_two_replicas_distil_as_one_device_on_the_same_global_batch(build_spec, tmp_path):
    """`mirrored` over 2 logical CPUs: each replica's teacher sees its half; the losses are
    averaged over the global batch, so the history and weights are one device's."""
    write_teacher(tmp_path / "teacher.keras")
    algorithm = {**DISTILLATION, "teacher": str(tmp_path / "teacher.keras")}
    one = build_spec(replica_independent_spec(algorithm=algorithm), stem="one")
    two = build_spec(replica_independent_spec(algorithm=algorithm, strategy={"type": "mirrored"}), stem="two")
    _, w1, h1, _ = run_harness(one, tmp_path, "one", "--epochs", "2", cpus=2)
    _, w2, h2, out2 = run_harness(two, tmp_path, "two", "--epochs", "2", cpus=2)
    assert "2 replica(s): global batch 32, 16 per replica" in out2
    for key in ("loss", "student_loss", "distillation_loss", "val_loss", "val_distillation_loss"):
        assert [r[key] for r in h2] == pytest.approx([r[key] for r in h1], rel=1e-5), key
    for a, b in zip(w1, w2, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
