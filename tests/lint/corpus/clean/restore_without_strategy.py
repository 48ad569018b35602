"""Train under MirroredStrategy, then restore the checkpoint and evaluate without any strategy.

The restore section creates a model, an optimizer and a metric outside `strategy.scope()`, on
purpose: they are never used in a distributed step. Its test pipeline has no prefetch and its loop
only evaluates."""
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH_SIZE = 64 * strategy.num_replicas_in_sync
(train_images, train_labels), (test_images, test_labels) = tf.keras.datasets.mnist.load_data()
train_images, test_images = train_images / 255.0, test_images / 255.0

train_dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels))
train_dataset = train_dataset.shuffle(60000).batch(GLOBAL_BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)


def create_model():
    return tf.keras.Sequential([tf.keras.Input((28, 28)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])


with strategy.scope():
    model = create_model()
    optimizer = tf.keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)


def train_step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        per_example_loss = loss_object(labels, model(images, training=True))
        loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH_SIZE)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@tf.function
def distributed_train_step(inputs):
    per_replica_losses = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)


for epoch in range(2):
    for batch in train_dist_dataset:
        distributed_train_step(batch)
    checkpoint.save("./checkpoints/ckpt")

# Restore without a strategy and evaluate.
eval_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="eval_accuracy")
new_model = create_model()
new_optimizer = tf.keras.optimizers.Adam()
test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(GLOBAL_BATCH_SIZE)


@tf.function
def eval_step(images, labels):
    eval_accuracy.update_state(labels, new_model(images, training=False))


restored = tf.train.Checkpoint(model=new_model, optimizer=new_optimizer)
restored.restore(tf.train.latest_checkpoint("./checkpoints"))
for images, labels in test_dataset:
    eval_step(images, labels)
print("Accuracy after restoring without a strategy:", float(eval_accuracy.result()))
