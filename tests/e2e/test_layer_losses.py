"""Losses from the model: a user's layer (`type: "module:Name"`) that calls `self.add_loss(...)`,
trained for real on one device and under `mirrored` with two replicas. Its term is logged by its
layer's name, equals the term computed by hand on the same batches, and is in the gradient,
divided by the replica count as the weights' regularization is."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from conftest import replica_independent_spec, write_module
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow

LAYERS = """
import keras
import numpy as np
from keras import ops


class Penalty(keras.layers.Layer):
    \"\"\"Passes its input on and adds `rate * mean(x ** 2) + (w - 1) ** 2`: `w`, its own weight,
    is on no output's path, so the added term is its only loss.\"\"\"

    def __init__(self, rate=0.5, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def build(self, input_shape):
        self.w = self.add_weight(shape=(), initializer="zeros", name="w")

    def call(self, x):
        self.add_loss(self.rate * ops.mean(ops.square(x)) + ops.square(self.w - 1.0))
        return x

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}


def examples(n, start):
    x = np.sin(np.arange(start, start + n * 8, dtype="float32")).reshape(n, 8) * np.arange(1, n + 1)[:, None] / n
    return {"features": x.astype("float32")}, {"label": (np.arange(n) % 3).astype("int32")}


def train_data():
    return examples(64, 0)


def validation_data():
    return examples(32, 1000)
"""
RATE, LR, BATCH = 0.5, 0.1, 32


def _spec() -> dict:
    spec = replica_independent_spec(train={"epochs": 1})  # SGD(0.1), batches in order
    spec["data"] = {
        "train": {"source": {"type": "python", "function": "kl_layers:train_data"}, "batch_size": BATCH},
        "validation": {"source": {"type": "python", "function": "kl_layers:validation_data"}},
    }
    spec["model"]["layers"] = [{"type": "kl_layers:Penalty", "rate": RATE, "name": "kl"}, {"type": "Dense", "units": 4}]
    return spec


def _by_hand(module) -> tuple[float, float, float]:
    """The logged train term (the mean over steps of the term at that step's weight), the
    validation term (at the final weight) and the final `w`: SGD on (w - 1) ** 2 from 0 gives
    w - 1 = -(1 - 2 * LR) ** step."""
    (x,), _ = (v.values() for v in module.train_data())
    steps = len(x) // BATCH
    terms = [RATE * np.mean(x[s * BATCH : (s + 1) * BATCH] ** 2) + (1 - 2 * LR) ** (2 * s) for s in range(steps)]
    (v,), _ = (d.values() for d in module.validation_data())
    final = 1 - (1 - 2 * LR) ** steps
    return float(np.mean(terms)), float(RATE * np.mean(v**2) + (final - 1) ** 2), final


def test_an_added_loss_is_logged_by_its_layer_name_and_trained_alike_on_one_or_two_replicas(build_spec, tmp_path):
    write_module(tmp_path, "kl_layers", LAYERS)
    spec = importlib.util.spec_from_file_location("kl_layers", tmp_path / "kl_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    train_term, validation_term, final_w = _by_hand(module)
    one = build_spec(_spec(), "one")
    two = build_spec({**_spec(), "strategy": {"type": "mirrored"}}, "two")
    _, w1, h1, _ = _harness(one, tmp_path, "one", cpus=2)
    _, w2, h2, out2 = _harness(two, tmp_path, "two", cpus=2)
    assert "2 replica(s)" in out2
    for history, weights in ((h1, w1), (h2, w2)):
        (row,) = history
        assert row["kl_loss"] == pytest.approx(train_term, rel=1e-5)
        assert row["val_kl_loss"] == pytest.approx(validation_term, rel=1e-5)
        # `w` moved only by the added term's gradient, divided by the replicas as it should be.
        (w,) = [value for value in weights if value.shape == ()]
        assert w == pytest.approx(final_w, rel=1e-5)
        assert row["loss"] > row["kl_loss"]  # the outputs' loss and the term, together
    for a, b in zip(w1, w2, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
