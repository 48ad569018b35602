"""The user's own objects of tests/check/deep_invalid_specs/own_objects.yaml."""

import keras
from keras import ops


class Scale(keras.layers.Layer):
    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor


def batch_mean(y_true, y_pred):
    """Wrong for tfgen: one value for the whole batch, not one per example."""
    return ops.mean(ops.square(y_true - y_pred))
