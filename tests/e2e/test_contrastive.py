"""`algorithm: {type: contrastive}` end to end, in real processes: the shipped specs/simclr.yaml
trains (loss falling, the probe far above chance) and exports the encoder alone; a run SIGKILLed
mid-epoch and run again ends bit for bit as the uninterrupted one, on one device and on two
mirrored replicas; and two mirrored replicas give one device's figures on the same global batch
(NT-Xent's negatives gathered from the global batch)."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import ROOT, build, read_history
from test_gan import ENV, assert_resumes_exactly, losses, run, weights

pytestmark = pytest.mark.slow

FIGURES = ("loss", "contrastive_accuracy", "probe_accuracy")


def simclr_spec(**algorithm) -> dict:
    """specs/simclr.yaml, deterministic, checkpointed every 3 steps, `algorithm` keys overridden."""
    spec = yaml.safe_load((ROOT / "specs" / "simclr.yaml").read_text())
    spec["algorithm"].update(algorithm)
    spec["deterministic"] = True
    spec["checkpoint"] = {"every_steps": 3, "keep": 2}
    return spec


def contrastive_build(folder, spec, stem):
    """`build`, with the spec's data module (specs/digit_images.py) beside the spec."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "digit_images.py").write_text((ROOT / "specs" / "digit_images.py").read_text())
    return build(folder, spec, stem)


def encoder_summary(path) -> str:
    check = (
        "import keras, sys; m = keras.models.load_model(sys.argv[1]); "
        "print(m.name, [l.name for l in m.layers], m.input_shape, m.output_shape)"
    )
    result = subprocess.run(
        [sys.executable, "-c", check, str(path)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_shipped_simclr_trains_and_exports_the_encoder_alone(tmp_path):
    out = tmp_path / "run"
    command = [
        sys.executable,
        str(ROOT / "generated" / "simclr.py"),
        "--epochs",
        "3",
        "--output-dir",
        str(out),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=ENV, check=False)
    assert result.returncode == 0, result.stderr
    rows = read_history(out)
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert all(math.isfinite(row[key]) for row in rows for key in FIGURES)
    assert rows[0]["loss"] > rows[1]["loss"] > rows[2]["loss"]
    assert rows[0]["contrastive_accuracy"] < rows[2]["contrastive_accuracy"]
    assert all(row["probe_accuracy"] > 0.5 for row in rows)  # chance: 0.1 (10 digits)
    summary = encoder_summary(out / "model.keras")
    expected = "simclr ['pixels', 'rescaling', 'conv2d', 'flatten', 'dense'] (None, 8, 8, 1) (None, 64)"
    assert summary == expected  # the encoder: no projection head
    assert sorted(p.name for p in out.glob("*.keras")) == ["model.keras"]


@pytest.mark.parametrize("method", ["simclr", "simsiam"])
def test_a_contrastive_run_killed_mid_epoch_resumes_bit_identically(tmp_path, method):
    """simsiam also stops early: on `loss` maximised with no patience, after epoch 2 of 3,
    exporting epoch 1's encoder (restore_best_weights), the same after a resume."""
    spec = simclr_spec(method=method)
    args = ["--epochs", "2"]
    if method == "simsiam":
        spec["algorithm"]["predictor"] = [{"type": "Dense", "units": 32}]
        del spec["algorithm"]["temperature"]
        spec["train"]["early_stopping"] = {"monitor": "loss", "mode": "max", "patience": 0}
        spec["train"]["early_stopping"]["restore_best_weights"] = True
        args = ["--epochs", "3"]
    script = contrastive_build(tmp_path, spec, method)
    whole = run(script, tmp_path / "whole", "--networks", "model", args=args)
    assert whole.returncode == 0, whole.stderr
    killed = run(
        script,
        tmp_path / "resumed",
        "--networks",
        "model",
        "--kill-in-epoch",
        "2",
        args=args,
    )
    assert killed.returncode == -9, killed.stderr
    resumed = run(script, tmp_path / "resumed", "--networks", "model", args=args)
    assert resumed.returncode == 0, resumed.stderr
    at = re.search(r"Resuming from \S+ \(epoch 2, step (\d+)\)", resumed.stdout)
    assert at and int(at[1]) > 0, resumed.stdout  # mid-epoch
    rows = losses(read_history(tmp_path / "whole"))
    assert losses(read_history(tmp_path / "resumed")) == rows
    assert [row["epoch"] for row in rows] == [1, 2] and rows[0]["loss"] != rows[1]["loss"]
    if method == "simsiam":
        assert "Early stopping: loss did not improve" in whole.stdout, whole.stdout
    for mine, theirs in zip(weights(tmp_path / "whole"), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_two_mirrored_replicas_give_one_devices_simclr_figures_and_resume_bit_identically(
    tmp_path,
):
    """The same global batches on one device and on two replicas: NT-Xent with each replica's
    rows against the gathered global batch gives the same losses and weights (a replica's own
    half as negatives would not); and the mirrored run, killed mid-epoch, resumes exactly.
    """
    one = contrastive_build(tmp_path / "one", simclr_spec(), "simclr")
    spec = simclr_spec()
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = contrastive_build(tmp_path / "two", spec, "simclr")
    args = ["--epochs", "2", "--steps-per-epoch", "6"]
    single = run(one, tmp_path / "single", "--networks", "model", args=args)
    mirrored = run(two, tmp_path / "mirrored", "--networks", "model", cpus=2, args=args)
    assert single.returncode == 0, single.stderr
    assert mirrored.returncode == 0, mirrored.stderr
    assert "2 replica(s): global batch 128, 64 per replica" in mirrored.stdout
    for a, b in zip(
        read_history(tmp_path / "single"),
        read_history(tmp_path / "mirrored"),
        strict=True,
    ):
        for key in FIGURES:
            assert b[key] == pytest.approx(a[key], rel=1e-5, abs=1e-6), key
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "mirrored"), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)
    killed = run(
        two,
        tmp_path / "resumed",
        "--networks",
        "model",
        "--kill-in-epoch",
        "2",
        cpus=2,
        args=args,
    )
    assert killed.returncode == -9, killed.stderr
    resumed = run(two, tmp_path / "resumed", "--networks", "model", cpus=2, args=args)
    assert resumed.returncode == 0, resumed.stderr
    assert re.search(r"Resuming from \S+ \(epoch 2, step [1-9]", resumed.stdout), resumed.stdout
    assert losses(read_history(tmp_path / "resumed")) == losses(read_history(tmp_path / "mirrored"))
    for mine, theirs in zip(weights(tmp_path / "mirrored"), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_float16_on_two_replicas_gives_one_devices_figures_and_resumes_bit_identically(tmp_path):
    """`precision: mixed_float16` (on CPU): the encoder and heads compute in float16 with their
    last layers in float32, the loss scaled and the scaled gradients summed over the replicas
    before the LossScaleOptimizer checks them. Two replicas log one device's figures and loss
    scale (within float16's rounding); the mirrored run, killed mid-epoch, resumes exactly."""
    spec = simclr_spec()
    spec["precision"] = "mixed_float16"
    one = contrastive_build(tmp_path / "one", spec, "simclr")
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = contrastive_build(tmp_path / "two", spec, "simclr")
    assert "keras.optimizers.LossScaleOptimizer(" in two.read_text()
    args = ["--epochs", "2", "--steps-per-epoch", "4"]
    single = run(one, tmp_path / "single", "--networks", "model", args=args)
    assert single.returncode == 0, single.stderr
    mirrored = run(two, tmp_path / "mirrored", "--networks", "model", cpus=2, args=args)
    assert mirrored.returncode == 0, mirrored.stderr
    rows = read_history(tmp_path / "mirrored")
    for a, b in zip(read_history(tmp_path / "single"), rows, strict=True):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-2) and b["loss_scale"] == a["loss_scale"]
    assert all(math.isfinite(row[key]) for row in rows for key in FIGURES)
    assert_resumes_exactly(two, tmp_path, tmp_path / "mirrored", "--networks", "model", cpus=2, args=args, steps=4)
