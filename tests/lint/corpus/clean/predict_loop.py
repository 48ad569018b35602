"""Inference only: batches of a test pipeline through a tf.function, predictions kept as NumPy."""
import numpy as np
import tensorflow as tf
import keras

model = keras.models.load_model("classifier.keras")
images = np.zeros((512, 28, 28), dtype="float32")
test_dataset = tf.data.Dataset.from_tensor_slices(images).batch(64)


@tf.function
def predict_step(batch):
    return tf.argmax(model(batch, training=False), axis=-1)


predictions = []
for batch in test_dataset:
    predictions.append(predict_step(batch).numpy())
for step, batch in enumerate(test_dataset):
    predict_step(batch)
print(np.concatenate(predictions)[:10])
