"""The generated digits and mnist scripts, executed on CPU: they train, log, stop, and resume."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, base_spec, copy_run, load_module, read_history

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def digits():
    return load_module(ROOT / "generated" / "digits.py")


@pytest.fixture(scope="module")
def mnist():
    return load_module(ROOT / "generated" / "mnist.py")


@pytest.fixture(scope="module")
def trained_digits(digits, tmp_path_factory):
    """One uninterrupted run of generated/digits.py: (its history, its run folder)."""
    folder = tmp_path_factory.mktemp("digits")
    return digits.main(["--output-dir", str(folder)]), folder


def test_digits_trains_to_95_percent_with_documented_history(trained_digits):
    history, tmp_path = trained_digits
    assert history == read_history(tmp_path)
    assert [row["epoch"] for row in history] == list(range(1, len(history) + 1))
    expected = {
        "epoch",
        "loss",
        "sparse_categorical_accuracy",
        "val_loss",
        "val_sparse_categorical_accuracy",
        "lr",
        "skipped_steps",
        "epoch_seconds",
        "examples_per_second",
    }
    assert all(set(row) == expected for row in history)
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]
    assert max(row["val_sparse_categorical_accuracy"] for row in history) >= 0.95
    assert all(row["lr"] == pytest.approx(0.001) and row["examples_per_second"] > 0 for row in history)
    assert (tmp_path / "model.keras").exists()
    assert (tmp_path / "checkpoints" / "checkpoint").exists()


def tflite_outputs(path, features):
    """The outputs of the TFLite model at `path` on `features`, by the interpreter TF ships."""
    import tensorflow as tf

    with pytest.warns(UserWarning, match="deprecated"):  # tf.lite.Interpreter: LiteRT's in TF 2.21
        interpreter = tf.lite.Interpreter(model_path=str(path))
    return interpreter.get_signature_runner()(**features)


def test_the_tflite_exports_predict_as_the_keras_model_on_validation_examples(digits, trained_digits):
    import keras

    folder = trained_digits[1]
    _, validation = digits.load_data()
    features = {"pixels": validation[0]["pixels"][:200]}
    expected = keras.saving.load_model(folder / "model.keras").predict(features, verbose=0)["digit"]
    plain = tflite_outputs(folder / "model.tflite", features)["digit"]
    np.testing.assert_allclose(plain, expected, atol=1e-4)
    quantized = tflite_outputs(folder / "model.quantized.tflite", features)["digit"]
    assert (quantized.argmax(1) == expected.argmax(1)).mean() >= 0.97  # int8 weights, float activations
    assert (folder / "model.quantized.tflite").stat().st_size < 0.5 * (folder / "model.tflite").stat().st_size


def test_a_missing_tflite_export_is_written_again_by_the_rerun(trained_digits, tmp_path):
    finished = copy_run(trained_digits[1], tmp_path / "run")
    (finished / "model.quantized.tflite").unlink()
    script = ROOT / "generated" / "digits.py"
    result = subprocess.run(
        [sys.executable, str(script), "--output-dir", str(finished)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    said = [line for line in result.stdout.splitlines() if "missing or unreadable" in line]
    assert said == ["model.tflite is missing or unreadable: writing again from the best epoch's weights"]
    assert (finished / "model.quantized.tflite").read_bytes()[4:8] == b"TFL3"


def test_validation_split_is_seeded_random_and_disjoint(digits):
    train_ds, validation_ds = digits.build_datasets()
    count = lambda ds: sum(int(t["digit"].shape[0]) for _, t in ds)
    assert count(validation_ds) == round(1797 * 0.2)
    labels = np.concatenate([t["digit"].numpy() for _, t in validation_ds])
    assert len(set(labels.tolist())) == 10  # load_digits is ordered; a tail split would not be
    train_x = {tuple(x["pixels"].numpy()[i]) for x, _ in train_ds for i in range(x["pixels"].shape[0])}
    val_x = [tuple(x["pixels"].numpy()[i]) for x, _ in validation_ds for i in range(x["pixels"].shape[0])]
    assert sum(v in train_x for v in val_x) < 5  # digits has a few duplicate images, no shared rows


def test_early_stopping_matches_keras_and_restores_best_weights(build_spec, tmp_path):
    import keras

    # Random labels: validation loss rises once the model starts memorising.
    spec = base_spec(
        optimizer={"type": "Adam", "learning_rate": 0.05},
        train={"epochs": 40, "early_stopping": {"monitor": "val_loss", "patience": 2, "restore_best_weights": True}},
    )
    module = load_module(build_spec(spec))
    out = tmp_path / "run"
    history = module.main(["--output-dir", str(out)])
    assert len(history) < 40, "early stopping never fired"

    # Replay the same values through Keras's own callback: it must stop at the same epoch.
    callback = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2)
    callback.set_model(keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)]))
    callback.model.stop_training = False
    callback.on_train_begin()
    keras_epochs = 0
    for epoch, row in enumerate(history):
        callback.on_epoch_end(epoch, {"val_loss": row["val_loss"]})
        keras_epochs = epoch + 1
        if callback.model.stop_training:
            break
    assert keras_epochs == len(history)

    # The saved model holds the best epoch's weights: its validation loss is the minimum.
    model = keras.models.load_model(out / "model.keras")
    _, validation_ds = module.build_datasets()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    losses = np.concatenate([loss_fn(t["label"], model(x, training=False)["label"]).numpy() for x, t in validation_ds])
    assert losses.mean() == pytest.approx(min(row["val_loss"] for row in history), rel=1e-5)


def test_rerun_resumes_and_fresh_restarts(build_spec, tmp_path, capsys):
    import tensorflow as tf

    module = load_module(build_spec(base_spec()))
    out = tmp_path / "run"
    module.main(["--output-dir", str(out), "--epochs", "2"])
    with open(out / "history.jsonl", "a") as handle:  # a row past the checkpoint (as after a kill)
        handle.write('{"epoch": 3, "loss": 123.0}\n')
    capsys.readouterr()
    history = module.main(["--output-dir", str(out), "--epochs", "4"])
    assert "Resuming from" in capsys.readouterr().out
    assert [row["epoch"] for row in history] == [1, 2, 3, 4]
    assert history[2]["loss"] != 123.0
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3, 4]
    reader = tf.train.load_checkpoint(str(out / "checkpoints"))
    iterations = [k for k in reader.get_variable_to_shape_map() if k.startswith("optimizer/_iterations")]
    assert int(reader.get_tensor(iterations[0])) == 4 * (256 // 32)

    history = module.main(["--output-dir", str(out), "--epochs", "1", "--fresh"])
    assert [row["epoch"] for row in history] == [1]


def test_steps_per_epoch_caps_training(build_spec, tmp_path):
    module = load_module(build_spec(base_spec()))
    history = module.main(["--output-dir", str(tmp_path / "run"), "--epochs", "1", "--steps-per-epoch", "3"])
    assert history[0]["examples_per_second"] > 0
    reader = __import__("tensorflow").train.load_checkpoint(str(tmp_path / "run" / "checkpoints"))
    key = next(k for k in reader.get_variable_to_shape_map() if k.startswith("optimizer/_iterations"))
    assert int(reader.get_tensor(key)) == 3


def _write_mnist_npz(folder, train=2000, test=400):
    rng = np.random.default_rng(0)

    # Learnable: each class lights up its own band of rows.
    def make(n):
        y = rng.integers(0, 10, n)
        x = rng.integers(0, 60, (n, 28, 28))
        for i, label in enumerate(y):
            x[i, 2 * label : 2 * label + 3, :] += 180
        return x.astype("uint8"), y.astype("uint8")

    (folder / "data").mkdir(exist_ok=True)
    x_train, y_train = make(train)
    x_test, y_test = make(test)
    np.savez(folder / "data" / "mnist.npz", x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)


def test_mnist_trains_on_its_npz_file(mnist, tmp_path, monkeypatch):
    _write_mnist_npz(tmp_path)
    monkeypatch.chdir(tmp_path)
    history = mnist.main(["--epochs", "3"])
    assert (tmp_path / "runs" / "mnist" / "model.keras").exists()
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["val_sparse_categorical_accuracy"] > 0.9


def test_mnist_synthetic_needs_no_data_file(mnist, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    history = mnist.main(["--synthetic", "--epochs", "1", "--output-dir", "out"])
    assert not (tmp_path / "data").exists()
    assert set(history[0]) >= {"loss", "val_loss", "sparse_categorical_accuracy"}


def test_missing_data_file_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "generated" / "mnist.py"), "--epochs", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    assert result.returncode == 1
    assert "error: data file data/mnist.npz not found" in result.stderr
    assert "--synthetic" in result.stderr
    assert "Traceback" not in result.stderr


def test_same_seed_gives_identical_runs(build_spec, tmp_path):
    import keras

    module = load_module(build_spec(base_spec()))
    first = module.main(["--output-dir", str(tmp_path / "a"), "--epochs", "2"])
    second = module.main(["--output-dir", str(tmp_path / "b"), "--epochs", "2"])
    strip = lambda rows: [
        {k: v for k, v in r.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")} for r in rows
    ]
    assert strip(first) == strip(second)
    a = keras.models.load_model(tmp_path / "a" / "model.keras").get_weights()
    b = keras.models.load_model(tmp_path / "b" / "model.keras").get_weights()
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=False))


def test_learning_rate_schedule_object(build_spec, tmp_path):
    spec = base_spec(
        optimizer={
            "type": "SGD",
            "learning_rate": {
                "type": "ExponentialDecay",
                "initial_learning_rate": 0.1,
                "decay_steps": 8,
                "decay_rate": 0.5,
            },
        }
    )
    module = load_module(build_spec(spec))
    history = module.main(["--output-dir", str(tmp_path / "run"), "--epochs", "3"])
    # 8 steps per epoch, the rate halving every 8 steps: `lr` is the rate of each epoch's last step.
    assert [row["lr"] for row in history] == pytest.approx([0.1 * 0.5 ** (s / 8) for s in (7, 15, 23)])


def test_progress_bar_on_a_terminal_plain_lines_otherwise(tmp_path):
    import pty

    script = ROOT / "generated" / "digits.py"
    args = [sys.executable, str(script), "--epochs", "1", "--output-dir", str(tmp_path / "run")]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    plain = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, check=False)
    assert plain.returncode == 0
    assert plain.stdout.strip().splitlines()[-2].startswith("Epoch 1/1 - ")
    assert "/22 [" not in plain.stdout

    controller, terminal = pty.openpty()
    process = subprocess.Popen([*args, "--fresh"], stdout=terminal, stderr=subprocess.DEVNULL, env=env)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    assert process.wait(timeout=300) == 0
    text = output.decode(errors="replace")
    assert "22/22" in text and ("━" in text or "=" in text)  # keras.utils.Progbar's bar
