import tensorflow as tf


def bad_step(model, optimizer, x):
    with tf.GradientTape(persistent=True) as tape:  # expect: TFG017
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def fixed_step(model, optimizer, x):
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    del tape
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
