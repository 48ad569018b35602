"""Test data: held out of the training source (`test_split`) or a source of its own (`test`),
evaluated once on the final model after training (one `Test:` line and test.json), and again on
a finished run only when test.json is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import load_module, tfgen_here

pytestmark = pytest.mark.slow

CITIES = ("paris", "lyon", "nice", "lille")


def write_sizes(path, rows, seed):
    """A CSV of a city (text) and the size of its houses (a named class, right 9 times in 10)."""
    rng = np.random.default_rng(seed)
    lines = ["city,sqft,size"]
    for _ in range(rows):
        city = CITIES[int(rng.integers(0, 4))]
        large = city in ("paris", "nice") if rng.random() > 0.1 else city not in ("paris", "nice")
        lines.append(f"{city},{rng.uniform(50, 250):.1f},{'large' if large else 'small'}")
    path.write_text("\n".join(lines) + "\n")
    return path


def sizes_spec(train, **data):
    return {
        "name": "sizes",
        "seed": 5,
        "data": {
            "train": {"source": {"type": "csv", "path": str(train), "x": "city", "y": "size"}, "batch_size": 16},
            **data,
        },
        "model": {
            "inputs": {"city": {"shape": [1], "dtype": "string"}},
            "layers": [
                {"type": "Hashing", "num_bins": 16, "output_mode": "one_hot"},
                {"type": "Dense", "units": 8, "activation": "relu"},
            ],
            "outputs": {"size": [{"type": "Dense", "units": 2}]},
        },
        "targets": {"size": {"classes": ["small", "large"]}},
        "losses": {"size": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "metrics": {"size": ["SparseCategoricalAccuracy"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.05},
        "train": {"epochs": 3},
    }


def run(script, *args):
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def printed_test_lines(result):
    assert result.returncode == 0, result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if line.startswith("Test:")]


def exported_values(out, test):
    """The loss and accuracy of the exported model.keras on the test arrays, computed here."""
    import keras
    import tensorflow as tf

    model = keras.models.load_model(out / "model.keras")
    features = {name: tf.constant(array) for name, array in test[0].items()}  # the csv's text as bytes
    labels = test[1]["size"]
    logits = model.predict(features, verbose=0)["size"]
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    accuracy = np.mean(np.argmax(logits, axis=-1) == labels)
    return {"loss": float(loss), "sparse_categorical_accuracy": float(accuracy)}


def test_a_test_split_is_evaluated_once_and_again_only_when_test_json_is_missing(build_spec, tmp_path):
    train = write_sizes(tmp_path / "sizes.csv", 300, seed=0)
    spec = sizes_spec(train, validation_split=0.2, test_split=0.2, stratify=True)
    script, out = build_spec(spec), tmp_path / "run"
    first = run(script, "--output-dir", str(out))
    [line] = printed_test_lines(first)
    values = json.loads((out / "test.json").read_text())
    assert list(values) == ["loss", "sparse_categorical_accuracy"]
    assert (
        line
        == f"Test: loss: {values['loss']:.4f} - sparse_categorical_accuracy: {values['sparse_categorical_accuracy']:.4f}"
    )
    train_rows, validation, test = load_module(script).load_data()
    counts = [len(part[1]["size"]) for part in (train_rows, validation, test)]
    assert counts == [180, 60, 60]
    test_cities = {bytes(city) for city in test[0]["city"][:, 0]}
    assert test_cities <= {city.encode() for city in CITIES}
    for name, value in exported_values(out, test).items():
        assert value == pytest.approx(values[name], rel=1e-5, abs=1e-6), name
    written = (out / "test.json").stat().st_mtime_ns
    again = run(script, "--output-dir", str(out))
    assert printed_test_lines(again) == [] and "Already finished at epoch 3" in again.stdout
    assert (out / "test.json").stat().st_mtime_ns == written
    (out / "test.json").unlink()
    missing = run(script, "--output-dir", str(out))
    assert printed_test_lines(missing) == [line]
    assert json.loads((out / "test.json").read_text()) == values
    fresh = run(script, "--output-dir", str(out), "--fresh", "--epochs", "1")
    assert "test.json" in fresh.stdout.splitlines()[1], fresh.stdout  # --fresh discarded it
    assert len(printed_test_lines(fresh)) == 1


def test_a_test_source_is_evaluated_with_the_best_weights_under_a_mirrored_strategy(build_spec, tmp_path):
    train = write_sizes(tmp_path / "sizes.csv", 240, seed=0)
    held = write_sizes(tmp_path / "held.csv", 50, seed=1)
    source = {"type": "csv", "path": str(held), "x": "city", "y": "size"}
    spec = sizes_spec(train, validation_split=0.25, test={"source": source, "batch_size": 20})
    spec["train"]["early_stopping"] = {"monitor": "val_loss", "patience": 5, "restore_best_weights": True}
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    script, out = build_spec(spec), tmp_path / "run"
    result = run(script, "--output-dir", str(out))
    assert len(printed_test_lines(result)) == 1
    assert result.stdout.index("Restored the weights of the best epoch") < result.stdout.index("Test:")
    _, _, test = load_module(script).load_data()
    assert len(test[1]["size"]) == 50
    values = json.loads((out / "test.json").read_text())
    for name, value in exported_values(out, test).items():
        assert value == pytest.approx(values[name], rel=1e-5, abs=1e-6), name
    (out / "test.json").unlink()
    finished = run(script, "--output-dir", str(out))  # the best weights again, not the last checkpoint's
    assert len(printed_test_lines(finished)) == 1
    assert json.loads((out / "test.json").read_text()) == pytest.approx(values, rel=1e-6)


def test_smoke_trains_resumes_and_tests_a_test_split_and_a_test_source(tmp_path):
    import yaml

    train = write_sizes(tmp_path / "sizes.csv", 200, seed=0)
    held = {"type": "csv", "path": str(write_sizes(tmp_path / "held.csv", 40, seed=1)), "x": "city", "y": "size"}
    split, source = tmp_path / "split.yaml", tmp_path / "source.yaml"
    split.write_text(yaml.safe_dump(sizes_spec(train, test_split=0.2, stratify=True)))
    source.write_text(yaml.safe_dump(sizes_spec(train, test={"source": held})))
    for data in ([], ["--real-data", "100"]):
        result = tfgen_here("smoke", str(split), str(source), "--steps", "2", *data, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]
        assert result.stdout.count("resumed to epoch 2, tested") == 2, result.stdout


def test_a_finished_run_tests_with_its_adapted_statistics_restored(build_spec, tmp_path):
    lines = ["sqft,age,price"]
    rng = np.random.default_rng(2)
    for _ in range(200):
        sqft, age = rng.uniform(50, 250), rng.uniform(0, 80)
        lines.append(f"{sqft:.1f},{age:.1f},{0.01 * sqft - 0.02 * age:.4f}")
    (tmp_path / "houses.csv").write_text("\n".join(lines) + "\n")
    source = {"type": "csv", "path": str(tmp_path / "houses.csv"), "x": ["sqft", "age"], "y": "price"}
    spec = sizes_spec(tmp_path / "houses.csv", test_split=0.2)
    spec["data"]["train"]["source"] = source
    spec["model"] = {
        "inputs": {"features": {"shape": [2]}},
        "layers": [{"type": "Normalization", "adapt": True}, {"type": "Dense", "units": 8, "activation": "relu"}],
        "outputs": {"price": [{"type": "Dense", "units": 1}]},
    }
    spec["targets"] = {"price": {"shape": [1]}}
    spec["losses"] = {"price": "MeanSquaredError"}
    spec["metrics"] = {}
    script, out = build_spec(spec), tmp_path / "run"
    [line] = printed_test_lines(run(script, "--output-dir", str(out)))
    (out / "test.json").unlink()
    # The finished run adapts nothing: it computes with the statistics its checkpoint restored.
    assert printed_test_lines(run(script, "--output-dir", str(out))) == [line]
