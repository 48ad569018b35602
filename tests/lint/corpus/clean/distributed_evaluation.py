"""Evaluation only, distributed: a saved model scored with `strategy.run` over a test set.

Nothing is trained, so the pipeline needs no prefetch for the linter, and no optimizer is built."""
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH_SIZE = 128 * strategy.num_replicas_in_sync
(_, _), (test_images, test_labels) = tf.keras.datasets.fashion_mnist.load_data()
test_dataset = tf.data.Dataset.from_tensor_slices((test_images / 255.0, test_labels)).batch(GLOBAL_BATCH_SIZE)
test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)

with strategy.scope():
    model = tf.keras.models.load_model("model.keras")
    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")


def test_step(inputs):
    images, labels = inputs
    predictions = model(images, training=False)
    test_loss.update_state(loss_object(labels, predictions))
    test_accuracy.update_state(labels, predictions)


@tf.function
def distributed_test_step(inputs):
    return strategy.run(test_step, args=(inputs,))


for batch in test_dist_dataset:
    distributed_test_step(batch)
print("Test loss", float(test_loss.result()), "accuracy", float(test_accuracy.result()))
