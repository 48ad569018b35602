"""The user's own Keras objects (`type: "module:Name"`) trained by generated scripts for real: a
layer, a loss class, a per-example loss function, a metric, a regularizer, an initializer and a
schedule from a module next to the spec; the exported model.keras loaded in a fresh process; a
function loss under `mirrored` equal to Keras's own loss on one device; a builder's one-tensor
model trained without Keras's input-structure warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import base_spec, write_module
from conftest import replica_independent_spec as _replica_independent
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow

OBJECTS = """
import keras
from keras import ops


class Scale(keras.layers.Layer):
    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.gain = self.add_weight(shape=(), initializer="ones", name="gain")

    def call(self, x):
        return x * self.factor * self.gain

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class FocalLoss(keras.losses.Loss):
    def __init__(self, gamma=2.0, **kwargs):
        super().__init__(**kwargs)
        self.gamma = gamma

    def call(self, y_true, y_pred):
        ce = keras.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)
        return ce * (1.0 - ops.exp(-ce)) ** self.gamma


def squared_error(y_true, y_pred, scale=1.0):
    return scale * ops.mean(ops.square(y_true - y_pred), axis=-1)


class Hits(keras.metrics.Metric):
    def __init__(self, name="hits", **kwargs):
        super().__init__(name=name, **kwargs)
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        guess = ops.cast(ops.argmax(y_pred, -1), "int32")
        self.count.assign_add(ops.sum(ops.cast(ops.equal(ops.cast(y_true, "int32"), guess), "float32")))

    def result(self):
        return self.count


class MeanAbs(keras.metrics.Mean):
    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(ops.mean(ops.abs(y_true - y_pred), axis=-1))


class SmallL2(keras.regularizers.Regularizer):
    def __init__(self, l2=0.001):
        self.l2 = l2

    def __call__(self, x):
        return self.l2 * ops.sum(ops.square(x))

    def get_config(self):
        return {"l2": self.l2}


class Halves(keras.initializers.Initializer):
    def __call__(self, shape, dtype=None):
        return ops.full(shape, 0.5, dtype=dtype)


class Halving(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, rate=0.01, every=10):
        self.rate, self.every = rate, every

    def __call__(self, step):
        return self.rate * 0.5 ** ops.floor(ops.cast(step, "float32") / self.every)

    def get_config(self):
        return {"rate": self.rate, "every": self.every}
"""


def _every_kind_spec() -> dict:
    dense = {
        "type": "Dense",
        "units": 16,
        "activation": "relu",
        "kernel_regularizer": {"type": "my_objects:SmallL2", "l2": 0.01},
        "kernel_initializer": {"type": "my_objects:Halves"},
    }
    spec = base_spec(
        targets={"label": {"shape": [], "dtype": "int32", "classes": 3}, "value": {"shape": [2]}},
        losses={
            "label": {"type": "my_objects:FocalLoss", "gamma": 1.5},
            "value": {"type": "my_objects:squared_error", "scale": 2.0},
        },
        metrics={"label": ["my_objects:Hits", "SparseCategoricalAccuracy"]},
        optimizer={"type": "Adam", "learning_rate": {"type": "my_objects:Halving", "rate": 0.01, "every": 4}},
    )
    spec["model"]["layers"] = [{"type": "my_objects:Scale", "factor": 0.5}, dense]
    spec["model"]["outputs"] = {"label": [{"type": "Dense", "units": 3}], "value": [{"type": "Dense", "units": 2}]}
    return spec


def test_every_kind_of_own_object_trains_and_model_keras_loads_in_a_fresh_process(build_spec, tmp_path):
    write_module(tmp_path, "my_objects", OBJECTS)  # next to the spec
    script = build_spec(_every_kind_spec())
    initial, _, history, _ = _harness(script, tmp_path, "run", "--epochs", "2")
    assert any(w.shape == (8, 16) and np.all(w == 0.5) for w in initial)  # Halves made the kernel
    # Halving(rate=0.01, every=4), 8 steps an epoch: the rate of each epoch's last step
    assert [row["lr"] for row in history] == pytest.approx([0.01 * 0.5 ** (7 // 4), 0.01 * 0.5 ** (15 // 4)])
    for row in history:
        regularization = row["loss"] - row["label_loss"] - row["value_loss"]
        assert regularization > 0.01  # SmallL2's penalty is in the loss
        assert row["label_hits"] == round(row["label_sparse_categorical_accuracy"] * 256)
        assert np.isfinite(row["val_label_loss"]) and np.isfinite(row["val_value_loss"])
    # The README's recipe, elsewhere: the user's classes by name, in a process of their own.
    load = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import keras, numpy as np
        from my_objects import Halves, Scale, SmallL2
        model = keras.saving.load_model(
            {str(tmp_path / "run" / "model.keras")!r},
            custom_objects={{"Scale": Scale, "SmallL2": SmallL2, "Halves": Halves}},
        )
        scale = next(layer for layer in model.layers if isinstance(layer, Scale))
        out = model({{"features": np.ones((2, 8), "float32")}})
        print(scale.factor, sorted(out), out["label"].shape)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", load],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "0.5 ['label', 'value'] (2, 3)"


def _regression(loss: dict | str, metric: dict, **overrides) -> dict:
    spec = _replica_independent(
        targets={"value": {"shape": [2]}}, losses={"value": loss}, metrics={"value": [metric]}, **overrides
    )
    spec["model"]["outputs"] = {"value": [{"type": "Dense", "units": 2}]}
    return spec


def test_a_loss_function_under_mirrored_equals_keras_own_loss_on_one_device(build_spec, tmp_path):
    """Per example, then averaged over the global batch: two replicas give one device's numbers."""
    write_module(tmp_path, "my_objects", OBJECTS)
    keras_own = build_spec(_regression("MeanSquaredError", {"type": "MeanAbsoluteError", "name": "mae"}), "own")
    mine = _regression("my_objects:squared_error", {"type": "my_objects:MeanAbs", "name": "mae"})
    mine = build_spec({**mine, "strategy": {"type": "mirrored"}}, "mine")
    _, w1, h1, _ = _harness(keras_own, tmp_path, "own", "--epochs", "2", cpus=2)
    _, w2, h2, out2 = _harness(mine, tmp_path, "mine", "--epochs", "2", cpus=2)
    assert "2 replica(s)" in out2
    for key in ("loss", "mae", "val_loss", "val_mae"):
        assert [r[key] for r in h2] == pytest.approx([r[key] for r in h1], rel=1e-5), key
    for a, b in zip(w1, w2, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


ONE_TENSOR = """
import keras


def build(name=None):
    x = keras.Input((8,), name=name)
    return keras.Model(x, {"label": keras.layers.Dense(3)(keras.layers.Dense(4)(x))})
"""


@pytest.mark.parametrize("name", ["features", None])
def test_a_builder_model_of_one_tensor_input_trains_without_warnings(build_spec, tmp_path, name):
    """Named as the spec's input, Keras warned of the dict on every trace; named otherwise, it
    refused the dict."""
    write_module(tmp_path, "one_tensor", ONE_TENSOR)
    spec = base_spec()
    spec["model"] = {"inputs": {"features": {"shape": [8]}}, "builder": "one_tensor:build", "kwargs": {"name": name}}
    script = build_spec(spec)
    command = [
        sys.executable,
        "-W",
        "always::UserWarning",
        str(script),
        "--output-dir",
        str(tmp_path / "run"),
        "--epochs",
        "1",
    ]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "UserWarning" not in result.stderr, result.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "run" / "history.jsonl").read_text().splitlines()]
    assert [row["epoch"] for row in rows] == [1]
