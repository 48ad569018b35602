import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(1, kernel_regularizer=keras.regularizers.L2(0.01))])


def bad_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    loss += tf.add_n(model.losses)  # expect: TFG013
    return tape.gradient(loss, model.trainable_variables)


def fixed_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
        loss += tf.add_n(model.losses)
    return tape.gradient(loss, model.trainable_variables)
