"""`algorithm: {type: custom}` end to end, in real processes: the shipped specs/custom_step.yaml
trains with specs/my_steps.py (its declared figures logged, classifier.keras exported); a run
SIGKILLed mid-epoch and run again ends bit for bit as the uninterrupted one (ctx's random numbers
included); two mirrored replicas give one replica's figures; a step that returns an undeclared
figure, or whose module is gone, is one line."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import ROOT, assert_one_line_error, build, read_history
from test_gan import ENV, OVERFLOWING_DIGITS, assert_resumes_exactly, losses, run, weights

pytestmark = pytest.mark.slow

NETWORKS = ("--networks", "classifier")


def custom_spec(folder, steps=None) -> dict:
    """specs/custom_step.yaml, deterministic, with its step module (or `steps`' text) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    module = folder / "my_steps.py"
    if steps is None:
        shutil.copy(ROOT / "specs" / "my_steps.py", module)
    else:
        module.write_text(steps)
    spec = yaml.safe_load((ROOT / "specs" / "custom_step.yaml").read_text())
    spec["deterministic"] = True
    return spec


def test_the_shipped_custom_step_trains_logs_its_declared_figures_and_exports(tmp_path):
    out = tmp_path / "run"
    script = ROOT / "generated" / "custom_step.py"
    command = [sys.executable, str(script), "--epochs", "3", "--output-dir", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=ENV, check=False)
    assert result.returncode == 0, result.stderr
    rows = read_history(out)
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert all(math.isfinite(row["loss"]) and 0.0 <= row["accuracy"] <= 1.0 for row in rows)
    assert rows[2]["loss"] < rows[0]["loss"] and rows[2]["accuracy"] > rows[0]["accuracy"]
    assert "loss: " in result.stdout and "accuracy: " in result.stdout
    check = "import keras, sys; m = keras.models.load_model(sys.argv[1]); print(m.name)"
    loaded = subprocess.run(
        [sys.executable, "-c", check, str(out / "classifier.keras")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert loaded.stdout.strip() == "classifier", loaded.stderr


def test_a_custom_step_killed_mid_epoch_resumes_bit_identically(tmp_path):
    spec = custom_spec(tmp_path)
    spec["checkpoint"] = {"every_steps": 5, "keep": 2}
    script = build(tmp_path, spec, "custom_step")
    whole = run(script, tmp_path / "whole", *NETWORKS, args=["--epochs", "2"])
    assert whole.returncode == 0, whole.stderr
    killed = run(script, tmp_path / "resumed", *NETWORKS, "--kill-in-epoch", "2", args=["--epochs", "2"])
    assert killed.returncode == -9, killed.stderr
    resumed = run(script, tmp_path / "resumed", *NETWORKS, args=["--epochs", "2"])
    assert resumed.returncode == 0, resumed.stderr
    at = re.search(r"Resuming from \S+ \(epoch 2, step (\d+)\)", resumed.stdout)
    assert at and int(at[1]) > 0, resumed.stdout  # mid-epoch
    assert losses(read_history(tmp_path / "resumed")) == losses(read_history(tmp_path / "whole"))
    for mine, theirs in zip(weights(tmp_path / "whole"), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_two_mirrored_replicas_give_one_replicas_figures(tmp_path):
    one = build(tmp_path / "one", custom_spec(tmp_path / "one"), "custom_step")
    spec = custom_spec(tmp_path / "two")
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = build(tmp_path / "two", spec, "custom_step")
    args = ["--epochs", "2", "--steps-per-epoch", "8"]
    single = run(one, tmp_path / "single", *NETWORKS, args=args)
    mirrored = run(two, tmp_path / "mirrored", *NETWORKS, cpus=2, args=args)
    assert single.returncode == 0, single.stderr
    assert mirrored.returncode == 0, mirrored.stderr
    assert "2 replica(s): global batch 64, 32 per replica" in mirrored.stdout
    for a, b in zip(read_history(tmp_path / "single"), read_history(tmp_path / "mirrored"), strict=True):
        for key in ("loss", "accuracy"):
            assert b[key] == pytest.approx(a[key], rel=1e-5, abs=1e-6), key
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "mirrored"), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)


def test_a_float16_step_on_two_replicas_skips_an_update_one_replica_overflows_and_resumes_bit_identically(tmp_path):
    """`precision: mixed_float16` (on CPU): the shipped step, unchanged, is loss-scaled by
    `ctx.apply`. On digits with rows whose scaled gradients overflow float16, two mirrored
    replicas skip the updates one device skips (the scaled gradients are summed over the
    replicas before the LossScaleOptimizer checks them; without the sum, the other replica
    applies the inf and the run stops on a NaN loss), with its scales and weights; a run
    SIGKILLed mid-epoch and run again ends as the uninterrupted one."""
    spec = custom_spec(tmp_path)
    spec["precision"] = "mixed_float16"
    spec["checkpoint"] = {"every_steps": 5, "keep": 2}
    spec["data"]["train"]["source"] = {"type": "python", "function": "overflowing_digits:load"}
    (tmp_path / "overflowing_digits.py").write_text(OVERFLOWING_DIGITS)
    one = build(tmp_path, spec, "custom_step")
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = build(tmp_path, spec, "custom_mirrored")
    args = ["--epochs", "2", "--steps-per-epoch", "8"]
    single = run(one, tmp_path / "single", *NETWORKS, args=args)
    assert single.returncode == 0, single.stderr
    whole = run(two, tmp_path / "whole", *NETWORKS, cpus=2, args=args)
    assert whole.returncode == 0, whole.stderr
    scaling = [{k: row[k] for k in ("loss_scale", "skipped_steps")} for row in read_history(tmp_path / "single")]
    assert scaling[-1]["skipped_steps"] > 0 and scaling[-1]["loss_scale"] < 2**15, scaling  # overflows skipped
    assert [{k: row[k] for k in ("loss_scale", "skipped_steps")} for row in read_history(tmp_path / "whole")] == scaling
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "whole"), strict=True):
        assert np.isfinite(theirs).all()
        np.testing.assert_allclose(mine, theirs, rtol=1e-2, atol=1e-3)

    assert_resumes_exactly(two, tmp_path, tmp_path / "whole", *NETWORKS, cpus=2, args=args)


def one_epoch(script, tmp_path, cwd=None):
    """One epoch of `script` into tmp_path/run, in a process of its own."""
    command = [sys.executable, str(script), "--epochs", "1", "--output-dir", str(tmp_path / "run")]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd, env=ENV, check=False)


UNDECLARED = (
    (ROOT / "specs" / "my_steps.py")
    .read_text()
    .replace('"accuracy": tf.cast(hits, tf.float32)}', '"accuracy": tf.cast(hits, tf.float32), "margin": logits[:, 0]}')
)


def test_a_step_returning_an_undeclared_figure_is_one_line_naming_it(tmp_path):
    assert "margin" in UNDECLARED
    script = build(tmp_path, custom_spec(tmp_path, UNDECLARED), "custom_step")
    result = one_epoch(script, tmp_path)
    assert_one_line_error(result, "my_steps:train_step returns undeclared `margin`", "algorithm.logs declares")


def test_a_step_module_gone_since_the_build_is_one_line_naming_it(tmp_path):
    script = build(tmp_path, custom_spec(tmp_path), "custom_step")
    (tmp_path / "my_steps.py").unlink()
    result = one_epoch(script, tmp_path, cwd=tmp_path)
    assert_one_line_error(result, "my_steps:train_step: no module my_steps")


UNREACHED = (
    (ROOT / "specs" / "my_steps.py")
    .read_text()
    .replace(
        "    with tf.GradientTape() as tape:\n        logits = ",
        "    logits = classifier({'pixels': pixels}, training=True)['digit']\n"
        "    with tf.GradientTape() as tape:\n        unused = ",
    )
)


def test_a_step_whose_loss_reaches_no_weight_is_one_line_naming_the_variables(tmp_path):
    assert "unused = " in UNREACHED
    script = build(tmp_path, custom_spec(tmp_path, UNREACHED), "custom_step")
    result = one_epoch(script, tmp_path)
    line = assert_one_line_error(result, "the step's loss for `classifier` does not reach")
    assert "kernel" in line and "bias" in line, line


def test_clipping_under_two_mirrored_replicas_clips_the_global_gradient_as_one_device(tmp_path):
    args = ["--epochs", "1", "--steps-per-epoch", "8"]
    runs = {}
    for name, clipping, cpus in (("plain", None, 1), ("one", 0.05, 1), ("two", 0.05, 2)):
        spec = custom_spec(tmp_path / name)
        spec["optimizers"]["classifier"] = {"type": "SGD", "learning_rate": 0.1}  # the update is the gradient
        if clipping:
            spec["train"]["gradient_clipping"] = {"global_norm": clipping}
        if cpus == 2:
            spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
        script = build(tmp_path / name, spec, "custom_step")
        result = run(script, tmp_path / name / "run", *NETWORKS, cpus=cpus, args=args)
        assert result.returncode == 0, result.stderr
        runs[name] = weights(tmp_path / name / "run")
    for mine, theirs in zip(runs["one"], runs["two"], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-6)
    # Clipping changed the updates (each replica clipping its own half would double them).
    assert sum(float(np.abs(a - b).max()) for a, b in zip(runs["one"], runs["plain"], strict=True)) > 1e-3


TWO_NETWORKS = '''import tensorflow as tf


def train_step(networks, features, targets, ctx):
    """A small GAN written as a custom step: two networks, two optimizers, noise from ctx."""
    generator, discriminator = networks["generator"], networks["discriminator"]
    real = features["pixels"]
    with tf.GradientTape() as tape:
        fake = generator({"noise": ctx.normal([32])}, training=True)["pixels"]
        real_scores = tf.reshape(discriminator({"pixels": real}, training=True)["real"], [-1])
        fake_scores = tf.reshape(discriminator({"pixels": fake}, training=True)["real"], [-1])
        d_loss = tf.nn.softplus(-real_scores) + tf.nn.softplus(fake_scores)
        loss = ctx.average(d_loss) + ctx.regularization(discriminator)
    ctx.apply("discriminator", tape, loss)
    with tf.GradientTape() as tape:
        fake = generator({"noise": ctx.normal([32])}, training=True)["pixels"]
        g_loss = tf.nn.softplus(-tf.reshape(discriminator({"pixels": fake}, training=True)["real"], [-1]))
        loss = ctx.average(g_loss) + ctx.regularization(generator)
    ctx.apply("generator", tape, loss)
    return {"d_loss": d_loss, "g_loss": g_loss}
'''


def test_a_two_network_custom_step_killed_mid_epoch_resumes_bit_identically(tmp_path):
    spec = yaml.safe_load((ROOT / "specs" / "gan.yaml").read_text())
    spec["name"] = "two_networks"
    spec["algorithm"] = {"type": "custom", "step": "my_steps:train_step", "logs": ["d_loss", "g_loss"]}
    spec["networks"] = {"discriminator": spec["networks"]["discriminator"], "generator": spec["networks"]["generator"]}
    spec["deterministic"] = True
    spec["checkpoint"] = {"every_steps": 5, "keep": 2}
    (tmp_path / "my_steps.py").write_text(TWO_NETWORKS)
    script = build(tmp_path, spec, "two_networks")
    both = ("--networks", "generator,discriminator")
    whole = run(script, tmp_path / "whole", *both, args=["--epochs", "2"])
    assert whole.returncode == 0, whole.stderr
    killed = run(script, tmp_path / "resumed", *both, "--kill-in-epoch", "2", args=["--epochs", "2"])
    assert killed.returncode == -9, killed.stderr
    resumed = run(script, tmp_path / "resumed", *both, args=["--epochs", "2"])
    assert resumed.returncode == 0, resumed.stderr
    at = re.search(r"Resuming from \S+ \(epoch 2, step (\d+)\)", resumed.stdout)
    assert at and int(at[1]) > 0, resumed.stdout
    rows = losses(read_history(tmp_path / "whole"))
    assert all(math.isfinite(row["d_loss"]) and math.isfinite(row["g_loss"]) for row in rows)
    assert losses(read_history(tmp_path / "resumed")) == rows
    for mine, theirs in zip(weights(tmp_path / "whole"), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_a_custom_step_logs_its_figures_to_tensorboard_and_stops_early_in_the_mode_asked(tmp_path):
    """The step's loss falls: followed in `max` mode with patience 1, the run stops after epoch 2
    of 4; its declared figures are TensorBoard scalars every 4 steps and every epoch."""
    from test_gan import tensorboard_tags

    spec = custom_spec(tmp_path)
    spec["logging"] = {"tensorboard": True, "every_steps": 4}
    spec["train"]["early_stopping"] = {"monitor": "loss", "patience": 1, "mode": "max"}
    script = build(tmp_path, spec, "custom_step")
    result = run(script, tmp_path / "run", *NETWORKS, args=["--epochs", "4", "--steps-per-epoch", "8"])
    assert result.returncode == 0, result.stderr
    rows = read_history(tmp_path / "run")
    assert [row["epoch"] for row in rows] == [1, 2] and rows[1]["loss"] < rows[0]["loss"]
    tags = tensorboard_tags(tmp_path / "run" / "tensorboard" / "train")
    for name in ("loss", "accuracy"):
        assert tags[f"step/{name}"] == [4, 8, 12, 16] and tags[f"epoch/{name}"] == [1, 2]


def test_a_non_finite_loss_skips_the_custom_steps_update(tmp_path):
    """`on_nonfinite: skip`: ctx.apply skips an update whose loss is NaN (an exp() overflow on 18
    rows of the digits) and the run goes on, counting the skipped steps, weights finite."""
    from test_gan import HUGE_DIGITS

    spec = custom_spec(tmp_path)
    spec["train"]["on_nonfinite"] = "skip"
    spec["data"]["train"]["source"] = {"type": "python", "function": "huge_digits:load"}
    spec["networks"]["classifier"]["layers"].append({"type": "Dense", "units": 16, "activation": "exponential"})
    (tmp_path / "huge_digits.py").write_text(HUGE_DIGITS)
    script = build(tmp_path, spec, "custom_step")
    result = run(script, tmp_path / "run", *NETWORKS, args=["--epochs", "2", "--steps-per-epoch", "8"])
    assert result.returncode == 0, result.stderr
    rows = read_history(tmp_path / "run")
    assert 0 < rows[0]["skipped_steps"] < rows[1]["skipped_steps"] < 16, rows
    assert all(np.isfinite(w).all() for w in weights(tmp_path / "run"))
