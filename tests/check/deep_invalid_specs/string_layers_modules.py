"""The user's own layers on a string input (tests/check/deep_invalid_specs/custom_layer_on_strings.yaml)."""

import keras
import tensorflow as tf


class Standardize(keras.layers.Layer):
    """Lower-cases and strips punctuation: a `standardize` stand-in that computes on strings."""

    def call(self, x):
        return tf.strings.regex_replace(tf.strings.lower(x), r"[^a-z ]", "")


class Double(keras.layers.Layer):
    """Computes on numbers only: on strings its call fails (the script's model does not build)."""

    def call(self, x):
        return x * 2.0
