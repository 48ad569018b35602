import keras

keras.mixed_precision.set_global_policy("mixed_float16")
inputs = keras.Input((8,))
outputs = keras.layers.Dense(3, activation="softmax")(inputs)  # expect: TFG012
model = keras.Model(inputs, outputs)
sequential = keras.Sequential([
    keras.layers.Dense(8),
    keras.layers.Dense(1, activation="sigmoid"),  # expect: TFG012
])

fixed_outputs = keras.layers.Dense(3, activation="softmax", dtype="float32")(inputs)
fixed = keras.Model(inputs, fixed_outputs)
fixed_sequential = keras.Sequential([
    keras.layers.Dense(8),
    keras.layers.Dense(1, activation="sigmoid", dtype="float32"),
])
