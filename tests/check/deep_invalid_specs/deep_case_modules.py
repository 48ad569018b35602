"""Functions that deep-validation cases name (found next to the specs, by the lookup rule)."""


def load_data():
    raise AssertionError("deep validation never calls a data source")


def broken_model(width=8):
    raise ValueError(f"cannot build a model of width {width}: the block needs an even width")


def model_of_other_outputs():
    import keras

    x = keras.Input((8,), name="x")
    return keras.Model({"x": x}, {"score": keras.layers.Dense(1)(x)})


def model_without_float32_head():
    import keras

    x = keras.Input((8,), name="x")
    return keras.Model({"x": x}, {"y": keras.layers.Dense(1)(x)})  # computes in float16 under mixed_float16


def model_of_probabilities():
    import keras

    x = keras.Input((8,), name="x")
    return keras.Model({"x": x}, {"label": keras.layers.Dense(3, activation="softmax", name="probabilities")(x)})
