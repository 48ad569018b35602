import tensorflow as tf
import keras

keras.mixed_precision.set_global_policy("mixed_float16")  # expect: TFG011
model = keras.Sequential([keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam()


def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    variables = model.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


# %% separate file: the fixed form (a LossScaleOptimizer anywhere in the file silences the rule)
import tensorflow as tf
import keras

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.layers.Dense(1)])
optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())


def step(x):
    with tf.GradientTape() as tape:
        loss = optimizer.scale_loss(tf.reduce_sum(model(x)))
    variables = model.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
