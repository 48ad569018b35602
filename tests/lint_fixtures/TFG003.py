import tensorflow as tf


@tf.function
def bad_step(x):
    return x.numpy() + 1  # expect: TFG003


def bad_tape(model, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
        scale = float(loss)  # expect: TFG003
    return tape.gradient(loss * scale, model.trainable_variables)


@tf.function
def fixed_step(x):
    return x + 1


def fixed_tape(model, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    scale = float(loss)
    return tape.gradient(loss, model.trainable_variables), scale
