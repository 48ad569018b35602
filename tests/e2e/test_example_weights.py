"""Class weights (`losses.<output>.class_weight`) and example weights (`data.train.sample_weight`):
each training example's loss is multiplied by its weights before the sum is divided by the global
batch size, on one device and across replicas; run for real through generated scripts."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import load_runtime
from conftest import run_harness as _harness
from folder_data import image_spec, write_images

pytestmark = pytest.mark.slow

EXAMPLES = 32  # one batch: one step per epoch
LEARNING_RATE = 0.5


def _data(seed=0, positives=0.25):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(EXAMPLES, 4)).astype("float32")
    y = (rng.random(EXAMPLES) < positives).astype("int32")
    w = rng.uniform(0.1, 2.0, size=EXAMPLES).astype("float32")
    return x, y, w


def _write_npz(path, x, y, w):
    np.savez(path, x=x, y=y, w=w)
    return {"type": "npz", "path": str(path), "x": "x", "y": "y"}


def _write_csv(path, x, y, w):
    rows = ["a,b,c,d,label,w"]
    rows += [",".join([*(repr(float(v)) for v in x[i]), str(y[i]), repr(float(w[i]))]) for i in range(len(y))]
    path.write_text("\n".join(rows) + "\n")
    return {"type": "csv", "path": str(path), "x": ["a", "b", "c", "d"], "y": "label"}


def _spec(source, *, class_weight=None, sample_weight=None, **overrides):
    """One Dense layer on 4 features, plain SGD, one full batch per epoch (no shuffle)."""
    train = {"source": source, "batch_size": EXAMPLES}
    if sample_weight is not None:
        train["sample_weight"] = sample_weight
    loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
    if class_weight is not None:
        loss["class_weight"] = class_weight
    return {
        "name": "weights",
        "seed": 3,
        "data": {"train": train},
        "model": {"inputs": {"features": {"shape": [4]}}, "outputs": {"label": [{"type": "Dense", "units": 2}]}},
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 2}},
        "losses": {"label": loss},
        "metrics": {"label": ["SparseCategoricalAccuracy"]},
        "optimizer": {"type": "SGD", "learning_rate": LEARNING_RATE},
        "train": {"epochs": 1},
        **overrides,
    }


def _by_hand(initial, x, y, weights):
    """The weighted loss of one step from the initial weights, and the weights SGD makes of it:
    sum(weight * per-example loss) / global batch size, in float64."""
    kernel, bias = (a.astype(np.float64) for a in initial)
    logits = x.astype(np.float64) @ kernel + bias
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    per_example = -np.log(p[np.arange(len(y)), y])
    loss = float(np.sum(weights * per_example) / EXAMPLES)
    grad_logits = (p - np.eye(2)[y]) * weights[:, None] / EXAMPLES
    kernel = kernel - LEARNING_RATE * x.T.astype(np.float64) @ grad_logits
    bias = bias - LEARNING_RATE * grad_logits.sum(axis=0)
    return loss, [kernel, bias]


def _assert_step(initial, final, history, x, y, weights):
    loss, expected = _by_hand(initial, x, y, weights)
    unweighted, _ = _by_hand(initial, x, y, np.ones(len(y)))
    assert abs(loss - unweighted) > 1e-2  # the weights change the loss: the comparison below has teeth
    assert history[0]["loss"] == pytest.approx(loss, rel=1e-6)
    predicted = np.argmax(x @ initial[0] + initial[1], axis=1)
    assert history[0]["sparse_categorical_accuracy"] == pytest.approx(np.mean(predicted == y))  # unweighted
    for have, want in zip(final, expected, strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-6)


def test_class_weights_and_npz_example_weights_scale_the_loss_and_its_gradient_exactly(build_spec, tmp_path):
    x, y, w = _data()
    source = _write_npz(tmp_path / "train.npz", x, y, w)
    script = build_spec(_spec(source, class_weight={0: 1.0, 1: 5.0}, sample_weight="w"))
    initial, final, history, _ = _harness(script, tmp_path, "run")
    _assert_step(initial, final, history, x, y, np.where(y == 1, 5.0, 1.0) * w)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["class_weights"] == {"label": [1.0, 5.0]}


def test_the_weighted_loss_under_mirrored_on_two_cpus_equals_the_single_device_one(build_spec, tmp_path):
    x, y, w = _data(seed=1)
    source = _write_npz(tmp_path / "train.npz", x, y, w)
    one = build_spec(_spec(source, class_weight={0: 2.0, 1: 0.5}, sample_weight="w"), stem="one")
    two = build_spec(
        _spec(source, class_weight={0: 2.0, 1: 0.5}, sample_weight="w", strategy={"type": "mirrored"}), stem="two"
    )
    initial, final_one, history_one, _ = _harness(one, tmp_path, "one", cpus=2)
    _, final_two, history_two, out = _harness(two, tmp_path, "two", cpus=2)
    assert "2 replica(s): global batch 32, 16 per replica" in out
    weights = np.where(y == 1, 0.5, 2.0) * w
    _assert_step(initial, final_one, history_one, x, y, weights)
    _assert_step(initial, final_two, history_two, x, y, weights)
    assert history_two[0]["loss"] == pytest.approx(history_one[0]["loss"], rel=1e-6)


def test_balanced_weights_count_the_streamed_csv_training_labels_are_recorded_and_kept_on_resume(build_spec, tmp_path):
    x, y, w = _data(seed=2)
    source = _write_csv(tmp_path / "train.csv", x, y, w)
    spec = _spec(source, class_weight="balanced", sample_weight="w")
    spec["data"]["train"]["in_memory"] = False  # streamed from the file: the labels are counted in one pass
    script = build_spec(spec)
    counts = np.bincount(y, minlength=2)
    balanced = EXAMPLES / (2 * counts)
    initial, final, history, out = _harness(script, tmp_path, "run")
    assert f"({EXAMPLES} labels)" in out
    _assert_step(initial, final, history, x, y, balanced[y] * w)
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["class_weights"]
    assert recorded["label"] == pytest.approx(balanced.tolist(), rel=1e-12)
    _harness(script, tmp_path, "run", "--epochs", "2")  # resumes the finished epoch, trains one more
    resumed = json.loads((tmp_path / "run" / "run.json").read_text())
    assert resumed["argv"][-2:] == ["--epochs", "2"]  # the resumed run rewrote run.json
    assert resumed["class_weights"] == recorded


def test_balanced_weights_of_a_folder_source_count_its_training_files(build_spec, tmp_path):
    files = write_images(tmp_path / "images", per_class=8)
    for path in [f for f in files if f.parent.name == "stripes"][:4]:
        path.unlink()
    spec = image_spec(tmp_path / "images")
    spec["losses"]["shape"]["class_weight"] = "balanced"
    spec["train"]["epochs"] = 1
    _, _, history, out = _harness(build_spec(spec), tmp_path, "run")
    training = np.array([6, 6, 3])  # a stratified quarter of 8, 8 and 4 files held out
    balanced = training.sum() / (3 * training)
    assert "(15 labels)" in out
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["class_weights"]
    assert recorded["shape"] == pytest.approx(balanced.tolist(), rel=1e-12)
    assert np.isfinite(history[0]["loss"])


def _run_script(script, tmp_path, *args):
    command = [sys.executable, str(script), "--output-dir", str(tmp_path / "run"), *args]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)


def test_bad_npz_example_weights_and_an_empty_balanced_class_are_one_line_errors(build_spec, tmp_path):
    x, y, w = _data(seed=3)
    path = tmp_path / "train.npz"
    source = _write_npz(path, x, y, w)
    weighted = build_spec(_spec(source, sample_weight="w"), stem="weighted")
    balanced = build_spec(_spec(source, class_weight="balanced"), stem="balanced")
    cases = [
        (weighted, {"x": x, "y": y, "w": np.where(np.arange(EXAMPLES) == 5, -1.0, w)}, "negative or not finite"),
        (weighted, {"x": x, "y": y, "w": w[:10]}, "not one weight per example"),
        (weighted, {"x": x, "y": y}, "no array w"),
        (balanced, {"x": x, "y": np.zeros(EXAMPLES, "int32"), "w": w}, "class 1 has no training example"),
    ]
    for script, arrays, message in cases:
        np.savez(path, **arrays)
        result = _run_script(script, tmp_path, "--fresh")
        assert result.returncode == 1, result.stderr[-2000:]
        assert "Traceback" not in result.stderr, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and message in errors[0], result.stderr


@pytest.fixture(scope="module")
def rt():
    return load_runtime()


@pytest.mark.parametrize("stream", [False, True])
def test_a_negative_weight_in_a_csv_column_is_one_line_naming_its_row(rt, tmp_path, stream):
    x, y, w = _data(seed=4)
    w[6] = -0.5
    source = _write_csv(tmp_path / "train.csv", x, y, w)
    inputs = {"features": rt.Field((4,), "float32")}
    targets = {"label": rt.Field((), "int32", classes=2)}
    with pytest.raises(rt.UserError, match=r"train\.csv: row 8, column `w`: the example weight '-0.5' is negative"):
        rt.read_csv(source["path"], inputs, targets, x=source["x"], y="label", stream=stream, sample_weight="w")


def test_class_ids_read_labels_as_keras_class_weight_does_and_balanced_is_scikit_learns(rt):
    import tensorflow as tf
    from sklearn.utils.class_weight import compute_class_weight

    module = importlib.import_module(rt.__name__ + ".class_weights")  # the package loads it on first use
    one_hot = rt.Field((3,), "float32", classes=3)
    binary = rt.Field((1,), "float32", classes=2)
    assert module.class_ids(tf.constant([[0.0, 0.0, 1.0], [0.9, 0.1, 0.0]]), one_hot).numpy().tolist() == [2, 0]
    assert module.class_ids(tf.constant([[0.2], [0.7], [1.0]]), binary).numpy().tolist() == [0, 1, 1]
    labels = np.array([0, 0, 0, 1, 2, 2])
    ours = rt.class_weights((None, {"y": labels}), {"y": rt.Field((), "int32", classes=3)}, {"y": "balanced"})
    assert ours["y"] == pytest.approx(compute_class_weight("balanced", classes=np.arange(3), y=labels).tolist())
