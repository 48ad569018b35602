"""The runtime's reading of the terms layers add (`add_loss`), in this process: which layers add
one, found by tracing a call that changes nothing; a name the history has already refused in one
line; float16 terms summed into the float32 loss (tests/e2e/test_layer_losses.py trains)."""

from __future__ import annotations

import pytest
from conftest import load_runtime

pytestmark = pytest.mark.slow  # imports TensorFlow


@pytest.fixture(scope="module")
def rt():
    return load_runtime()


def _model(dtype="float32"):
    import keras
    from keras import ops

    class Counted(keras.layers.Layer):
        """Adds mean(x) and counts its calls in a variable (a state a run would keep)."""

        def build(self, input_shape):
            self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False, name="calls")

        def call(self, x):
            self.calls.assign_add(1.0)
            self.add_loss(ops.mean(x))
            return x

    inputs = {"x": keras.Input((4,), name="x")}
    x = Counted(name="kl", dtype=dtype)(inputs["x"])
    x = keras.layers.Dense(2, activity_regularizer="l2", kernel_regularizer="l2", name="head", dtype=dtype)(x)
    return keras.Model(inputs, {"y": keras.layers.Dense(1, name="y")(x)})


def test_the_layers_that_add_a_loss_are_found_without_running_the_model(rt):
    model = _model()
    before = [v.numpy().copy() for v in model.variables]
    assert rt.layer_loss_names(model) == ["head_loss", "kl_loss"]  # not `y`: only its kernel's
    assert [v.numpy().tolist() for v in model.variables] == [b.tolist() for b in before]
    assert len(model.losses) == 1  # the kernel regularizer's: no traced term is left behind
    import numpy as np

    model({"x": np.full((2, 4), 3.0, "float32")})
    terms = rt.layer_losses(model)
    assert sorted(terms) == ["head_loss", "kl_loss"]
    assert float(terms["kl_loss"]) == pytest.approx(3.0)


def test_a_layer_loss_named_as_a_logged_figure_is_one_line(rt):
    with pytest.raises(rt.UserError) as error:
        rt.with_layer_losses({"loss": None, "label_loss": None}, ["label_loss"])
    message = str(error.value)
    assert "\n" not in message
    assert message == (
        "the layer `label` adds a loss (add_loss), logged as `label_loss`, a name the history "
        "already has: give the layer another `name`"
    )
    assert sorted(rt.with_layer_losses({"loss": None}, ["kl_loss"])) == ["kl_loss", "loss"]


def test_float16_layers_added_losses_sum_into_a_float32_loss(rt):
    import numpy as np

    model = _model("mixed_float16")
    model({"x": np.ones((2, 4), "float32")})
    assert any(loss.dtype == "float16" for loss in model.losses)
    total = rt.regularization_loss(model)
    assert total.dtype == "float32"
    assert float(total) == pytest.approx(sum(float(loss) for loss in model.losses), rel=1e-3)
