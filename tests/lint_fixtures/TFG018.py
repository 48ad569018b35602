import tensorflow as tf
import keras

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    lazy = keras.optimizers.Adam(learning_rate=1e-3)  # expect: TFG018
    fixed = keras.optimizers.Adam(learning_rate=1e-3)
    fixed.build(model.trainable_variables)
    # Never applied in a distributed step: its lazy build happens outside the replica context.
    unused = keras.optimizers.SGD(0.1)


def lazy_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(tf.square(model(x) - y), global_batch_size=64)
    gradients = tape.gradient(loss, model.trainable_variables)
    lazy.apply_gradients(zip(gradients, model.trainable_variables))


def fixed_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(tf.square(model(x) - y), global_batch_size=64)
    gradients = tape.gradient(loss, model.trainable_variables)
    fixed.apply_gradients(zip(gradients, model.trainable_variables))


@tf.function
def distributed_step(x, y):
    strategy.run(lazy_step, args=(x, y))
    strategy.run(fixed_step, args=(x, y))
