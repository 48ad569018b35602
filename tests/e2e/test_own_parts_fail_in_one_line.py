"""The user's own parts, when they are wrong, stop a generated script in one line, never a
traceback: a custom layer given a misspelled argument or whose constructor raises (naming the
layer's place in the spec, the class and the error), a custom loss that returns one value for
the batch (naming its shape), and a phase that leaves only layers without weights to train."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import assert_one_line_error, base_spec, write_module

pytestmark = pytest.mark.slow

OWN = """
import keras
from keras import ops


class Scale(keras.layers.Layer):
    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor


class Refuses(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        raise RuntimeError("Refuses needs a GPU")


def batch_mean(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred))
"""


def _error_line(script, tmp_path) -> str:
    result = subprocess.run(
        [sys.executable, str(script), "--output-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    return assert_one_line_error(result)


def _own_spec(layers, loss="MeanSquaredError"):
    return base_spec(
        model={
            "inputs": {"features": {"shape": [4]}},
            "layers": layers,
            "outputs": {"value": [{"type": "Dense", "units": 2}]},
        },
        targets={"value": {"shape": [2]}},
        losses={"value": loss},
        metrics={},
        train={"epochs": 1},
    )


def test_a_custom_layer_with_a_misspelled_argument_is_one_line_naming_its_place(build_spec, tmp_path):
    write_module(tmp_path, "own", OWN)
    # The class is used twice: the line names the use that is wrong.
    layers = [{"type": "own:Scale", "factor": 0.5}, {"type": "Dense", "units": 4}, {"type": "own:Scale", "factr": 2.0}]
    line = _error_line(build_spec(_own_spec(layers)), tmp_path)
    assert line == "error: model.layers.2: own:Scale: Unrecognized keyword arguments passed to Scale: {'factr': 2.0}"


def test_a_custom_layer_whose_constructor_raises_is_one_line_naming_its_place(build_spec, tmp_path):
    write_module(tmp_path, "own", OWN)
    layers = [{"type": "own:Scale", "factor": 2.0}, {"residual": [{"type": "own:Refuses"}]}]
    line = _error_line(build_spec(_own_spec(layers)), tmp_path)
    assert line == "error: model.layers.1.residual.0: own:Refuses: Refuses needs a GPU"


def test_a_custom_loss_returning_one_value_is_one_line_naming_its_shape(build_spec, tmp_path):
    write_module(tmp_path, "own", OWN)
    script = build_spec(_own_spec([{"type": "own:Scale"}], loss="own:batch_mean"))
    assert _error_line(script, tmp_path) == (
        "error: the loss `own:batch_mean` returned shape [] where per-example losses of shape [batch] were "
        "expected: return one loss per example (tfgen averages them over the global batch, across replicas)"
    )


def test_a_phase_that_leaves_only_layers_without_weights_is_one_line(build_spec, tmp_path):
    spec = base_spec(train={"epochs": 2, "phases": [{"epochs": 1}, {"epochs": 1, "frozen": ["body", "label"]}]})
    spec["model"]["layers"] = [{"type": "Dense", "units": 8, "name": "body"}, {"type": "Dropout", "rate": 0.1}]
    line = _error_line(build_spec(spec), tmp_path)
    assert line == (
        "error: train.phases.1: the phase freezes every layer that has weights, so epoch 2 would train nothing: "
        "leave some layer out of `frozen`"
    )
