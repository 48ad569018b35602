"""A layer-list model of several inputs (`model.branches` + `model.merge`), run for real: it
trains on real arrays, adapts a branch's layer on the training rows only, exports a model that
takes every input, resumes after a kill to the same history and weights, and `--deep` builds
every merge mode."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import load_runtime, read_history

from tfgen.cli import main

pytestmark = pytest.mark.slow

ROWS = 640
# Features far from mean 0, variance 1: the model learns well only once they are standardised.
FEATURE_MEAN = np.array([100.0, -50.0, 1000.0])
FEATURE_SCALE = np.array([10.0, 5.0, 200.0])
SEED = 7
SPLIT = 0.2

KILL_AFTER_SAVES = """
import importlib.util, os, sys
script, nth = sys.argv[1:3]
sys.path.insert(0, os.path.dirname(script))
import tfgen_runtime as rt
original, calls = rt.RunCheckpoint.save, []

def save_then_die(self, *args, **kwargs):
    result = original(self, *args, **kwargs)
    calls.append(1)
    if len(calls) == int(nth):
        os._exit(9)
    return result

rt.RunCheckpoint.save = save_then_die
spec = importlib.util.spec_from_file_location("script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(sys.argv[4:])
"""


def write_data(path) -> None:
    """`features` [3] on large scales, `extra` [2], and a price that depends on both."""
    rng = np.random.default_rng(0)
    standard = rng.normal(size=(ROWS, 3))
    features = (FEATURE_MEAN + FEATURE_SCALE * standard).astype("float32")
    extra = rng.normal(size=(ROWS, 2)).astype("float32")
    price = standard @ [1.5, -2.0, 0.5] + extra @ [1.0, 0.5] + 0.1 * rng.normal(size=ROWS)
    np.savez(path, features=features, extra=extra, price=price.astype("float32")[:, None])


def numeric_spec(data) -> dict:
    return {
        "name": "priced",
        "seed": SEED,
        "deterministic": True,
        "data": {
            "train": {
                "source": {
                    "type": "npz",
                    "path": str(data),
                    "x": {"features": "features", "extra": "extra"},
                    "y": {"price": "price"},
                },
                "batch_size": 32,
                "shuffle": 512,
            },
            "validation_split": SPLIT,
        },
        "model": {
            "inputs": {"features": {"shape": [3]}, "extra": {"shape": [2]}},
            "branches": {"features": [{"type": "Normalization", "adapt": True}]},
            "layers": [{"type": "Dense", "units": 16, "activation": "relu"}],
            "outputs": {"price": [{"type": "Dense", "units": 1}]},
        },
        "targets": {"price": {"shape": [1]}},
        "losses": {"price": "MeanSquaredError"},
        "metrics": {"price": ["MeanAbsoluteError"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 6},
        "checkpoint": {"every_epochs": 1, "keep": 3},
    }


def build(tmp_path, spec: dict, stem: str):
    """Build `spec` as a user does (in a real process) into tmp_path/generated."""
    path = tmp_path / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run(
        [sys.executable, "-m", "tfgen", "build", str(path), "--out", str(tmp_path / "generated")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return tmp_path / "generated" / f"{stem}.py"


def run(command: list[str], cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def learned_rows(out) -> list[dict]:
    """The history without its timings (which differ from run to run)."""
    return [
        {k: v for k, v in row.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")}
        for row in read_history(out)
    ]


def test_two_inputs_one_adapted_branch_train_export_and_resume_after_a_kill_to_the_same_run(tmp_path):
    data = tmp_path / "prices.npz"
    write_data(data)
    script = build(tmp_path, numeric_spec(data), "priced")
    straight = tmp_path / "straight"
    result = run([sys.executable, str(script), "--output-dir", str(straight)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Adapted adapted_normalization on 16 training batches" in result.stdout
    rows = read_history(straight)
    # Predicting the mean would leave a loss of about the price's variance (7.5); the model
    # learns the linear price once the branch has standardised the features.
    assert rows[0]["val_loss"] > 1.0 and rows[-1]["val_loss"] < 0.3, rows

    import keras

    exported = keras.saving.load_model(straight / "model.keras")
    layer = exported.get_layer("adapted_normalization")
    rt = load_runtime()
    with np.load(data) as arrays:
        x = {"features": arrays["features"], "extra": arrays["extra"]}
        y = {"price": arrays["price"]}
    (train_x, _), (validation_x, _) = rt.split_arrays((x, y), SPLIT, SEED)
    # Adapted on the training rows (all 16 batches of them), never on the held-out ones.
    np.testing.assert_allclose(layer.mean.numpy().ravel(), train_x["features"].mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(layer.variance.numpy().ravel(), train_x["features"].var(axis=0), rtol=1e-3)
    assert not np.allclose(layer.mean.numpy().ravel(), validation_x["features"].mean(axis=0), rtol=1e-5)
    # The exported model takes both inputs, by name.
    predicted = exported.predict({"features": x["features"][:4], "extra": x["extra"][:4]}, verbose=0)
    assert predicted["price"].shape == (4, 1)

    killed = tmp_path / "killed"
    command = [sys.executable, "-c", KILL_AFTER_SAVES, str(script), "2", "--", "--output-dir", str(killed)]
    died = run(command)
    assert died.returncode == 9, died.stderr[-3000:]
    assert [row["epoch"] for row in read_history(killed)] == [1, 2]
    resumed = run([sys.executable, str(script), "--output-dir", str(killed)])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "Adapted" not in resumed.stdout  # restored, not adapted again
    assert learned_rows(killed) == learned_rows(straight)
    again = keras.saving.load_model(killed / "model.keras")
    for ours, theirs in zip(again.get_weights(), exported.get_weights(), strict=True):
        assert ours.tobytes() == theirs.tobytes()  # bit-identical to the uninterrupted run


def merged_spec(merge: str) -> dict:
    """Three inputs, two of them branched, every one `width` 4 where the merge joins them."""
    return {
        "name": f"merged_{merge}",
        "data": {"train": {"source": {"type": "synthetic", "examples": 64}, "batch_size": 16}},
        "model": {
            "inputs": {"features": {"shape": [3]}, "extra": {"shape": [4]}, "ids": {"shape": [2], "dtype": "int32"}},
            "branches": {
                "features": [{"type": "Normalization", "adapt": True}, {"type": "Dense", "units": 4}],
                "ids": [{"type": "Embedding", "input_dim": 2, "output_dim": 2}, "Flatten"],
            },
            "merge": merge,
            "layers": [{"type": "Dense", "units": 8, "activation": "relu"}],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 3}},
        "losses": {"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "optimizer": "Adam",
        "train": {"epochs": 1},
    }


def test_every_merge_mode_deep_validates_with_the_merge_in_the_summary(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for merge, layer in (
        ("concatenate", "Concatenate"),
        ("add", "Add"),
        ("average", "Average"),
        ("multiply", "Multiply"),
    ):
        path = tmp_path / f"{merge}.yaml"
        path.write_text(yaml.safe_dump(merged_spec(merge), sort_keys=False))
        assert main(["validate", "--deep", "--summary", path.name]) == 0, capsys.readouterr().err
        summary = capsys.readouterr().out
        rows = [re.split(r"\s{2,}", line) for line in summary.splitlines()]
        types = {row[1] for row in rows if len(row) == 6}  # layer, type, shape, params, trainable, frozen
        assert {layer, "Normalization", "Embedding", "Flatten", "Dense"} <= types, summary


def test_a_merge_that_cannot_join_the_branches_is_one_line_at_the_branch(tmp_path):
    spec = merged_spec("add")
    spec["model"]["branches"]["features"][1]["units"] = 5
    path = tmp_path / "uneven.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run([sys.executable, "-m", "tfgen", "validate", "--deep", path.name], cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = path.read_text().splitlines().index("  branches:") + 2  # the `features:` key under it
    expected = (
        f"uneven.yaml:{line}:5: model.branches.features: `add` needs equal shapes: the `features` branch gives (5,) per "
        "example, input `extra` gives (4,)"
    )
    assert result.stderr.splitlines() == [expected]


CITIES = ("paris", "lyon", "nice", "lille")
CITY_PRICE = {"paris": 3.0, "lyon": 1.0, "nice": 2.0, "lille": 0.0}


def write_houses(path) -> None:
    """Numeric `features` [3] and a string `city` per house; the price depends on both."""
    rng = np.random.default_rng(1)
    city = np.array(CITIES)[rng.integers(0, len(CITIES), ROWS)]
    standard = rng.normal(size=(ROWS, 3))
    features = (np.array([120.0, 3.0, 30.0]) + np.array([40.0, 1.0, 15.0]) * standard).astype("float32")
    price = standard @ [1.0, 0.5, -0.5] + np.array([CITY_PRICE[c] for c in city]) + 0.1 * rng.normal(size=ROWS)
    np.savez(path, features=features, city=city, price=price.astype("float32")[:, None])


def houses_spec(data) -> dict:
    """The issue's example: numeric features through an adapted Normalization, a string city
    through StringLookup (one-hot), concatenated into the trunk."""
    lookup = {"type": "StringLookup", "vocabulary": list(CITIES), "output_mode": "one_hot"}
    return {
        "name": "houses",
        "seed": SEED,
        "data": {
            "train": {
                "source": {
                    "type": "npz",
                    "path": str(data),
                    "x": {"features": "features", "city": "city"},
                    "y": {"price": "price"},
                },
                "batch_size": 32,
                "shuffle": 512,
            },
            "validation_split": SPLIT,
        },
        "model": {
            "inputs": {"features": {"shape": [3], "dtype": "float32"}, "city": {"shape": [], "dtype": "string"}},
            "branches": {"features": [{"type": "Normalization", "adapt": True}], "city": [lookup]},
            "merge": "concatenate",
            "layers": [{"type": "Dense", "units": 64, "activation": "relu"}],
            "outputs": {"price": [{"type": "Dense", "units": 1}]},
        },
        "targets": {"price": {"shape": [1]}},
        "losses": {"price": "MeanSquaredError"},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 8},
    }


def test_a_string_city_through_its_lookup_branch_and_numeric_features_train_and_export(tmp_path):
    data = tmp_path / "houses.npz"
    write_houses(data)
    script = build(tmp_path, houses_spec(data), "houses")
    out = tmp_path / "run"
    result = run([sys.executable, str(script), "--output-dir", str(out)])
    assert result.returncode == 0, result.stderr[-3000:]
    rows = read_history(out)
    # Without the city the loss stays near the city prices' variance (1.25): the lookup is used.
    assert rows[-1]["val_loss"] < 0.1, rows

    import keras
    import tensorflow as tf

    exported = keras.saving.load_model(out / "model.keras")
    features = tf.constant([[120.0, 3.0, 30.0]] * len(CITIES))
    predicted = exported.predict({"features": features, "city": tf.constant(CITIES)}, verbose=0)["price"]
    # The same house, priced by its city (raw strings in, as the exported model takes them).
    for city, price in zip(CITIES, predicted[:, 0], strict=True):
        assert abs(price - CITY_PRICE[city]) < 0.4, (city, predicted)
