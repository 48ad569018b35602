"""A mixed-precision image loop in the style of the guides, with the articles' mistakes."""
import tensorflow as tf
from tensorflow import keras


def augment(image, label):
    image = tf.image.random_flip_left_right(image)
    return image, label


def make_dataset(images, labels):
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.shuffle(1000).batch(128).prefetch(tf.data.AUTOTUNE)


keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([
    keras.layers.Conv2D(32, 3, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-4)),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(10, activation="softmax"),
])
optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
loss_fn = keras.losses.SparseCategoricalCrossentropy()


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        probabilities = model(images, training=True)
        loss = loss_fn(labels, probabilities)
    loss += tf.add_n(model.losses)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
