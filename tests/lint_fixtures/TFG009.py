import tensorflow as tf
import keras

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(3)])
    per_example = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)


def bad_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(per_example(y, model(x)), global_batch_size=64)
        loss += tf.add_n(model.losses)  # expect: TFG009
    return tape.gradient(loss, model.trainable_variables)


def fixed_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(per_example(y, model(x)), global_batch_size=64)
        loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
    return tape.gradient(loss, model.trainable_variables)


def run(x, y):
    strategy.run(bad_step, args=(x, y))
    strategy.run(fixed_step, args=(x, y))
