"""`algorithm: {type: gan}` end to end, in real processes: the shipped specs/gan.yaml trains
(finite d_loss and g_loss rows, both exports load, samples written each epoch); a run SIGKILLed
mid-epoch and run again ends bit for bit as the uninterrupted one; two mirrored replicas give one
replica's losses on the same global batch."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import ROOT, build, load_module, read_history

pytestmark = pytest.mark.slow

RUNNER = ROOT / "tests" / "e2e" / "gan_runner.py"
TIMING = ("epoch_seconds", "examples_per_second", "input_wait")  # measured, not computed
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1", "TF_ENABLE_ONEDNN_OPTS": "0"}


def gan_spec(streamed=False, **algorithm) -> dict:
    """specs/gan.yaml, deterministic, with `algorithm` keys overridden (`streamed`: through tf.data)."""
    spec = yaml.safe_load((ROOT / "specs" / "gan.yaml").read_text())
    spec["algorithm"].update(algorithm)
    if streamed:
        spec["data"]["train"]["in_memory"] = False
    if "condition" in algorithm:  # both networks take the class one-hot
        for network in spec["networks"].values():
            network["inputs"][algorithm["condition"]] = {"shape": [10]}
    spec["deterministic"] = True
    spec["data"]["train"]["source"]["function"] = "sklearn.datasets:load_digits"
    return spec


def run(script, out, *options, cpus=1, args=()) -> subprocess.CompletedProcess:
    command = [sys.executable, str(RUNNER), str(script), "--weights", f"{out}.npz", "--cpus", str(cpus), *options]
    command += ["--", "--output-dir", str(out), *args]
    return subprocess.run(command, cwd=script.parent, capture_output=True, text=True, timeout=600, env=ENV, check=False)


def assert_resumes_exactly(script, tmp_path, whole, *options, cpus=1, args=(), steps=8):
    """`script` SIGKILLed mid-epoch 2 (of `steps` steps) into tmp_path/resumed and run again
    ends with the history and weights of the uninterrupted run in `whole`."""
    killed = run(script, tmp_path / "resumed", *options, "--kill-in-epoch", "2", cpus=cpus, args=args)
    assert killed.returncode == -9, killed.stderr
    resumed = run(script, tmp_path / "resumed", *options, cpus=cpus, args=args)
    assert resumed.returncode == 0, resumed.stderr
    at = rf"Resuming from \S+ \(epoch 2, step [1-{steps - 1}]\)"
    assert re.search(at, resumed.stdout), resumed.stdout
    assert losses(read_history(tmp_path / "resumed")) == losses(read_history(whole))
    for mine, theirs in zip(weights(whole), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def losses(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def weights(out) -> list[np.ndarray]:
    with np.load(f"{out}.npz") as saved:
        return [saved[f"arr_{i}"] for i in range(len(saved.files))]


def test_the_shipped_gan_trains_and_writes_both_networks_and_samples(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, str(ROOT / "generated" / "gan.py"), "--epochs", "2", "--output-dir", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=ENV, check=False)
    assert result.returncode == 0, result.stderr
    rows = read_history(out)
    assert [row["epoch"] for row in rows] == [1, 2]
    assert all(math.isfinite(row["d_loss"]) and math.isfinite(row["g_loss"]) for row in rows)
    assert rows[0]["d_loss"] != rows[1]["d_loss"]
    for epoch in (1, 2):
        with np.load(out / "samples" / f"epoch_{epoch:03d}.npz") as samples:
            assert samples["samples"].shape == (16, 64) and np.isfinite(samples["samples"]).all()
        assert (out / "samples" / f"epoch_{epoch:03d}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    check = "import keras, sys; [keras.models.load_model(p) for p in sys.argv[1:]]; print('loaded')"
    paths = [str(out / "generator.keras"), str(out / "discriminator.keras")]
    command = [sys.executable, "-c", check, *paths]
    loaded = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300, check=False)
    assert loaded.stdout.strip() == "loaded", loaded.stderr


@pytest.mark.parametrize(
    "algorithm",
    [
        {},
        {"loss": "wasserstein", "gradient_penalty": 10.0, "discriminator_steps": 2},
        {"loss": "hinge", "condition": "digit", "streamed": True},
    ],
    ids=["non_saturating", "wgan_gp", "hinge_conditional_streamed"],
)
def test_a_gan_killed_mid_epoch_resumes_bit_identically(tmp_path, algorithm):
    spec = gan_spec(**algorithm)
    spec["checkpoint"] = {"every_steps": 5, "keep": 2}
    script = build(tmp_path, spec, "gan")
    whole = run(script, tmp_path / "whole", args=["--epochs", "2"])
    assert whole.returncode == 0, whole.stderr
    killed = run(script, tmp_path / "resumed", "--kill-in-epoch", "2", args=["--epochs", "2"])
    assert killed.returncode == -9, killed.stderr
    resumed = run(script, tmp_path / "resumed", args=["--epochs", "2"])
    assert resumed.returncode == 0, resumed.stderr
    at = re.search(r"Resuming from \S+ \(epoch 2, step (\d+)\)", resumed.stdout)
    assert at and int(at[1]) > 0, resumed.stdout  # mid-epoch
    rows = losses(read_history(tmp_path / "whole"))
    assert losses(read_history(tmp_path / "resumed")) == rows
    if algorithm.get("gradient_penalty"):
        assert all(math.isfinite(row["gradient_penalty"]) for row in rows)
    for mine, theirs in zip(weights(tmp_path / "whole"), weights(tmp_path / "resumed"), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    for name in ("epoch_001.npz", "epoch_002.npz"):
        assert (tmp_path / "whole" / "samples" / name).read_bytes() == (
            tmp_path / "resumed" / "samples" / name
        ).read_bytes()


def test_a_wgan_gp_logs_its_last_discriminator_updates_losses(tmp_path):
    """With 2 discriminator updates a step, the history's d_loss and gradient_penalty are the last
    update's (as keras.io's WGAN-GP logs them), not the mean of the two: both computed again here
    from the exported weights (learning rates 0: each update sees them) and the script's draws."""
    import tensorflow as tf

    spec = gan_spec(loss="wasserstein", gradient_penalty=10.0, discriminator_steps=2)
    spec["data"]["train"]["shuffle"] = None  # the first batch: the first 64 rows
    for optimizer in spec["optimizers"].values():
        optimizer["learning_rate"] = 0.0
    script = build(tmp_path, spec, "gan")
    result = run(script, tmp_path / "run", args=["--epochs", "1", "--steps-per-epoch", "1"])
    assert result.returncode == 0, result.stderr
    (row,) = read_history(tmp_path / "run")
    module = load_module(script)
    generator, discriminator = (
        tf.keras.models.load_model(tmp_path / "run" / f"{n}.keras") for n in ("generator", "discriminator")
    )
    real = tf.constant(module.load_data()[0][0]["pixels"][:64], tf.float32)
    step = tf.constant(0, tf.int64)

    def score(examples):
        return tf.reshape(discriminator({"pixels": examples})["real"], [-1])

    def update_losses(number):  # the number-th update's d_loss and penalty, by hand
        fake = generator({"noise": module.draw(tf.random.stateless_normal, [32], step, 2 * number)})["pixels"]
        between = module.draw(tf.random.stateless_uniform, [1], step, 2 * number + 1)
        interpolates = real + between * (fake - real)
        with tf.GradientTape() as tape:
            tape.watch(interpolates)
            scores = score(interpolates)
        penalty = tf.square(tf.norm(tape.gradient(scores, interpolates), axis=1) - 1.0)
        d_loss = score(fake) - score(real) + 10.0 * penalty
        return float(tf.reduce_mean(d_loss)), float(tf.reduce_mean(penalty))

    (first, _), (last, last_penalty) = update_losses(0), update_losses(1)
    assert abs(first - last) > 1e-3 * abs(last)  # the mean of the two is not the last
    assert row["d_loss"] == pytest.approx(last, rel=1e-5)
    assert row["gradient_penalty"] == pytest.approx(last_penalty, rel=1e-5)


def test_two_mirrored_replicas_give_one_replicas_losses(tmp_path):
    one = build(tmp_path / "one", gan_spec(), "gan")
    spec = gan_spec()
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = build(tmp_path / "two", spec, "gan")
    args = ["--epochs", "2", "--steps-per-epoch", "8"]
    single = run(one, tmp_path / "single", args=args)
    mirrored = run(two, tmp_path / "mirrored", cpus=2, args=args)
    assert single.returncode == 0, single.stderr
    assert mirrored.returncode == 0, mirrored.stderr
    assert "2 replica(s): global batch 64, 32 per replica" in mirrored.stdout
    for a, b in zip(read_history(tmp_path / "single"), read_history(tmp_path / "mirrored"), strict=True):
        for key in ("d_loss", "g_loss"):
            assert b[key] == pytest.approx(a[key], rel=1e-5, abs=1e-6), key
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "mirrored"), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)


def tensorboard_tags(folder) -> dict[str, list[int]]:
    """Each scalar tag of a TensorBoard folder and the steps it was written at."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder), size_guidance={"tensors": 0})
    events.Reload()
    return {tag: [e.step for e in events.Tensors(tag)] for tag in events.Tags()["tensors"]}


def test_a_gan_logs_its_figures_to_tensorboard_and_stops_early_on_g_loss(tmp_path):
    """g_loss rises over the first epochs of specs/gan.yaml: with patience 1 the run stops after
    epoch 2 of 4; d_loss and g_loss are TensorBoard scalars every 4 steps and every epoch."""
    spec = gan_spec()
    spec["logging"] = {"tensorboard": True, "every_steps": 4}
    spec["train"]["early_stopping"] = {"monitor": "g_loss", "patience": 1}
    script = build(tmp_path, spec, "gan")
    result = run(script, tmp_path / "run", args=["--epochs", "4", "--steps-per-epoch", "8"])
    assert result.returncode == 0, result.stderr
    rows = read_history(tmp_path / "run")
    assert [row["epoch"] for row in rows] == [1, 2] and rows[1]["g_loss"] > rows[0]["g_loss"]
    assert "Early stopping: g_loss did not improve for 1 epochs" in result.stdout, result.stdout
    tags = tensorboard_tags(tmp_path / "run" / "tensorboard" / "train")
    for name in ("d_loss", "g_loss"):
        assert tags[f"step/{name}"] == [4, 8, 12, 16] and tags[f"epoch/{name}"] == [1, 2]
    assert tags["step/lr"] == [4, 8, 12, 16] and "step/gradient_norm" not in tags


HUGE_DIGITS = """import numpy as np
from sklearn.datasets import load_digits


def load():
    x, y = load_digits(return_X_y=True)
    x = x.astype("float32")
    x[::100] = 1e4  # 18 rows whose exp() overflows in the discriminator: NaN losses
    return x, y
"""


def test_a_non_finite_loss_skips_the_whole_gan_step_on_every_replica(tmp_path):
    """`on_nonfinite: skip`: a step whose discriminator loss is NaN (on one replica's half of the
    batch, under two mirrored replicas) skips the updates of both networks on every replica:
    one replica and two count the same skipped steps and end with the same finite weights."""
    spec = gan_spec()
    spec["train"]["on_nonfinite"] = "skip"
    spec["data"]["train"]["source"] = {"type": "python", "function": "huge_digits:load"}
    spec["networks"]["discriminator"]["layers"].append({"type": "Dense", "units": 16, "activation": "exponential"})
    (tmp_path / "huge_digits.py").write_text(HUGE_DIGITS)
    one = build(tmp_path, spec, "gan")
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = build(tmp_path, spec, "gan_mirrored")
    args = ["--epochs", "2", "--steps-per-epoch", "8"]
    single = run(one, tmp_path / "single", args=args)
    mirrored = run(two, tmp_path / "mirrored", cpus=2, args=args)
    assert single.returncode == 0, single.stderr
    assert mirrored.returncode == 0, mirrored.stderr
    rows, rows2 = read_history(tmp_path / "single"), read_history(tmp_path / "mirrored")
    assert 0 < rows[0]["skipped_steps"] < rows[1]["skipped_steps"] < 16, rows
    assert [row["skipped_steps"] for row in rows2] == [row["skipped_steps"] for row in rows]
    assert all(math.isfinite(row["g_loss"]) for row in rows)
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "mirrored"), strict=True):
        assert np.isfinite(mine).all()
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)


OVERFLOWING_DIGITS = """import numpy as np
from sklearn.datasets import load_digits


def load():
    x, y = load_digits(return_X_y=True)
    x = x.astype("float32")
    x[::100] = 6e4  # 18 rows, finite in float16: their scaled gradients overflow it
    return x, y
"""


def test_a_float16_gan_on_two_replicas_skips_a_step_one_replica_overflows_and_resumes_bit_identically(tmp_path):
    """`precision: mixed_float16` (on CPU) under two mirrored replicas: each optimizer's own
    dynamic scale in the checkpoint. A batch whose huge rows overflow the scaled gradients on one
    replica's half is skipped by the discriminator's optimizer on both replicas (the scaled
    gradients are summed over the replicas before it checks them), as one device skips it: the
    two end with the same scales and weights (without the sum, the other replica applies the inf
    and the run stops on a NaN loss). A run SIGKILLed mid-epoch and run again ends as the
    uninterrupted one."""
    import tensorflow as tf

    spec = gan_spec()
    spec["precision"] = "mixed_float16"
    spec["checkpoint"] = {"every_steps": 5, "keep": 2}
    spec["data"]["train"]["source"] = {"type": "python", "function": "overflowing_digits:load"}
    (tmp_path / "overflowing_digits.py").write_text(OVERFLOWING_DIGITS)
    one = build(tmp_path, spec, "gan")
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    two = build(tmp_path, spec, "gan_mirrored")
    args = ["--epochs", "2", "--steps-per-epoch", "8"]
    single = run(one, tmp_path / "single", args=args)
    assert single.returncode == 0, single.stderr
    whole = run(two, tmp_path / "whole", cpus=2, args=args)
    assert whole.returncode == 0, whole.stderr

    def scales(out) -> dict[str, float]:
        reader = tf.train.load_checkpoint(str(out / "checkpoints"))
        keys = [key for key in reader.get_variable_to_shape_map() if "dynamic_scale" in key]
        return {key.split("/")[1]: float(reader.get_tensor(key)) for key in keys}

    assert sorted(scales(tmp_path / "whole")) == ["discriminator", "generator"]
    assert scales(tmp_path / "whole") == scales(tmp_path / "single")
    assert scales(tmp_path / "single")["discriminator"] < scales(tmp_path / "single")["generator"]  # skipped steps
    for mine, theirs in zip(weights(tmp_path / "single"), weights(tmp_path / "whole"), strict=True):
        assert np.isfinite(theirs).all()
        np.testing.assert_allclose(mine, theirs, rtol=1e-2, atol=1e-3)

    assert_resumes_exactly(two, tmp_path, tmp_path / "whole", cpus=2, args=args)
    assert "float16" in two.read_text()
