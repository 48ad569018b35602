"""The structure of TensorFlow's mixed precision guide's custom loop, with a seeded per-example map."""
import tensorflow as tf
from tensorflow import keras


def augment(image, label):
    image = tf.image.random_flip_left_right(image)
    return image, label


def normalize(images, labels):
    return tf.cast(images, tf.float32) / 255.0, labels


def make_dataset(images, labels):
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).cache()
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    # batch before a per-example (vectorisable) map is fine
    ds = ds.shuffle(1000).batch(128).map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)


keras.mixed_precision.set_global_policy("mixed_float16")
inputs = keras.Input(shape=(784,))
x = keras.layers.Dense(4096, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-4))(inputs)
x = keras.layers.Dense(10)(x)
outputs = keras.layers.Activation("softmax", dtype="float32")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.RMSprop())
loss_object = keras.losses.SparseCategoricalCrossentropy()
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
manager = tf.train.CheckpointManager(checkpoint, "ckpt", max_to_keep=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x)
        loss = loss_object(y, predictions) + tf.add_n(model.losses)
        scaled_loss = optimizer.scale_loss(loss)
    gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


def train(images, labels, epochs):
    dataset = make_dataset(images, labels)
    for epoch in range(epochs):
        total = tf.constant(0.0)
        for x, y in dataset:
            total += train_step(x, y)
        tf.print("epoch", epoch, "loss", total)
        manager.save()
