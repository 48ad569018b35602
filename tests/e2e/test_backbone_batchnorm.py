"""`batchnorm: inference` on a backbone, run for real: its BatchNormalization layers keep their
moving statistics (and gamma and beta) bit for bit while its convolutions train, across a phase
that freezes the backbone, the change to the phase that trains it, and a resume in that phase;
without the option the backbone's statistics move as they did before."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import base_spec
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow

WEIGHT_KINDS = """
import importlib.util, json, sys
import keras
spec = importlib.util.spec_from_file_location("script", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.build_model()
norms = [layer for layer in model._flatten_layers() if isinstance(layer, keras.layers.BatchNormalization)]
inside = {id(w) for layer in norms for w in layer.weights}
print(json.dumps([[w.path, id(w) in inside] for w in model.weights]))
"""


# A backbone whose moving statistics are its input's (one training-mode pass with momentum 0):
# with random weights and the initial statistics (mean 0, variance 1), MobileNetV2's outputs in
# inference mode are about 1e-11 and no gradient reaches its kernels.
MAKE_WEIGHTS = """
import sys
import keras
keras.utils.set_random_seed(7)
model = keras.applications.MobileNetV2(
    include_top=False, weights=None, input_shape=(32, 32, 3), alpha=0.35, pooling="avg", name="backbone"
)
for layer in model.layers:
    if isinstance(layer, keras.layers.BatchNormalization):
        layer.momentum = 0.0
model(keras.random.uniform((64, 32, 32, 3), -1.0, 1.0, seed=1), training=True)
model.save_weights(sys.argv[1])
"""


def _spec(**backbone):
    return base_spec(
        data={
            "train": {"source": {"type": "synthetic", "examples": 32}, "batch_size": 16},
            "validation": {"source": {"type": "synthetic", "examples": 16}},
        },
        model={
            "inputs": {"image": {"shape": [32, 32, 3]}},
            "layers": [
                {"application": "MobileNetV2", "weights": None, "name": "backbone", "alpha": 0.35, "pooling": "avg"}
                | backbone
            ],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        optimizer={"type": "SGD", "learning_rate": 0.01},
        train={"epochs": 3, "phases": [{"epochs": 1, "frozen": ["backbone"]}, {"epochs": 2}]},
    )


def _groups(script):
    """The indices of the model's weights by kind: BatchNormalization's, convolution kernels."""
    result = subprocess.run(
        [sys.executable, "-c", WEIGHT_KINDS, str(script)], capture_output=True, text=True, check=True, timeout=300
    )
    kinds = json.loads(result.stdout.splitlines()[-1])
    batchnorm = [i for i, (_, inside) in enumerate(kinds) if inside]
    kernels = [i for i, (path, inside) in enumerate(kinds) if path.endswith("kernel") and "dense" not in path]
    statistics = [i for i in batchnorm if kinds[i][0].endswith(("moving_mean", "moving_variance"))]
    assert statistics and kernels and len(batchnorm) == 2 * len(statistics), kinds
    return batchnorm, statistics, kernels


def test_batchnorm_inference_keeps_a_training_backbones_statistics_across_a_phase_change_and_a_resume(
    build_spec, tmp_path
):
    weights = tmp_path / "backbone.weights.h5"
    subprocess.run([sys.executable, "-c", MAKE_WEIGHTS, str(weights)], check=True, capture_output=True, timeout=300)
    script = build_spec(_spec(batchnorm="inference", weights=str(weights)))
    batchnorm, _, kernels = _groups(script)
    # Epoch 1 (backbone frozen), then epoch 2 (the backbone trains) in the same process: setting
    # the backbone trainable again sets its BatchNormalization layers trainable too.
    initial, after_two, _, _ = _harness(script, tmp_path, "run", "--epochs", "2", timeout=600)
    _, after_three, history, out = _harness(script, tmp_path, "run", timeout=600)  # resumed in phase 2
    assert "Resuming from" in out and [row["phase"] for row in history] == [1, 2, 2]
    for i in batchnorm:  # moving mean and variance, gamma and beta: bit-identical
        np.testing.assert_array_equal(initial[i], after_two[i])
        np.testing.assert_array_equal(initial[i], after_three[i])
    for before, after in ((initial, after_two), (after_two, after_three)):
        moved = [not np.array_equal(before[i], after[i]) for i in kernels]
        assert sum(moved) > len(moved) // 2, f"{sum(moved)} of the backbone's {len(moved)} kernels trained"


def test_without_batchnorm_inference_a_training_backbones_statistics_move(build_spec, tmp_path):
    spec = _spec()
    spec["train"] = {"epochs": 1}
    script = build_spec(spec)
    _, statistics, kernels = _groups(script)
    initial, final, _, _ = _harness(script, tmp_path, "run", timeout=600)
    assert all(not np.array_equal(initial[i], final[i]) for i in statistics)
    assert any(not np.array_equal(initial[i], final[i]) for i in kernels)
