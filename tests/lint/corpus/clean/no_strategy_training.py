"""A single-device custom loop in the Keras guide's style: no strategy, so nothing needs a scope.

The optimizer is never built explicitly: without `strategy.run` its lazy build on the first step
is fine. Validation runs over a pipeline without prefetch."""
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.01, clipnorm=1.0)
loss_fn = keras.losses.MeanSquaredError()
val_mae = keras.metrics.MeanAbsoluteError()

features = np.random.default_rng(0).normal(size=(1024, 32)).astype("float32")
targets = features.sum(axis=1, keepdims=True)
train_dataset = tf.data.Dataset.from_tensor_slices((features[:896], targets[:896]))
train_dataset = train_dataset.shuffle(896, seed=0).batch(32).prefetch(tf.data.AUTOTUNE)
val_dataset = tf.data.Dataset.from_tensor_slices((features[896:], targets[896:])).batch(32)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@tf.function
def val_step(x, y):
    val_mae.update_state(y, model(x, training=False))


for epoch in range(3):
    epoch_losses = []
    for x, y in train_dataset:
        epoch_losses.append(float(train_step(x, y)))
    for x, y in val_dataset:
        val_step(x, y)
    print(f"epoch {epoch}: loss {np.mean(epoch_losses):.4f}, val MAE {float(val_mae.result()):.4f}")
    val_mae.reset_state()
