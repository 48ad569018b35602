import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L2(0.01))])


def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    return tape.gradient(loss, model.trainable_variables)  # expect: TFG014


# %% separate file: the fixed form
import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L2(0.01))])


def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x)) + tf.add_n(model.losses)
    return tape.gradient(loss, model.trainable_variables)
