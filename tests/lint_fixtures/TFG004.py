import tensorflow as tf
import keras

model = keras.Sequential([keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(0.1)
a, b = tf.zeros([64, 3]), tf.zeros([64, 1])


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@tf.function
def test_step(x, y):
    return tf.reduce_mean((model(x) - y) ** 2)


def evaluate(x):
    return model(x, training=False)


ds = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(100).batch(32)
for x, y in ds:  # expect: TFG004
    train_step(x, y)

# An evaluation loop is not a training loop, even over a pipeline without prefetch.
test_ds = tf.data.Dataset.from_tensor_slices((a, b)).batch(32)
for x, y in test_ds:
    test_step(x, y)
for x, y in test_ds:
    evaluate(x)

fixed = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(100).batch(32)
fixed = fixed.prefetch(tf.data.AUTOTUNE)
for x, y in fixed:
    train_step(x, y)


def run_epoch(trainer, dataset):
    # A step the linter cannot read is a training step when it is named as one.
    for x, y in dataset:
        trainer.train_step(x, y)


def epochs(trainer):
    pipeline = tf.data.Dataset.from_tensor_slices((a, b)).batch(32)
    for x, y in pipeline:  # expect: TFG004
        trainer.train_step(x, y)
    for x, y in pipeline:
        trainer.test_step(x, y)
    for x, y in pipeline:
        trainer.trainable_summary(x)


def eager_epoch(loss_fn):
    # An eager loop in the Keras guide's style: the update is inline (Keras 3 `optimizer.apply`).
    pipeline = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(64).batch(32)
    for x, y in pipeline:  # expect: TFG004
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        optimizer.apply(tape.gradient(loss, model.trainable_weights), model.trainable_weights)
    for x, y in pipeline:
        loss_fn(y, model(x, training=False))
