import tensorflow as tf
import keras

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(3)])
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    per_example = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)


def bad_mean_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(per_example(y, model(x)))  # expect: TFG008
    return tape.gradient(loss, model.trainable_variables)


def bad_default_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_object(y, model(x))  # expect: TFG008
    return tape.gradient(loss, model.trainable_variables)


def fixed_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(per_example(y, model(x)), global_batch_size=64)
    return tape.gradient(loss, model.trainable_variables)


def run(x, y):
    strategy.run(bad_mean_step, args=(x, y))
    strategy.run(bad_default_step, args=(x, y))
    strategy.run(fixed_step, args=(x, y))
