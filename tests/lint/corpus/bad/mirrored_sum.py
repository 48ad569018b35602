"""The seed articles' MirroredStrategy loop: per-replica means summed across replicas."""
import tensorflow as tf

GLOBAL_BATCH_SIZE = 64
strategy = tf.distribute.MirroredStrategy()

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(0.001)),
    tf.keras.layers.Dense(10),
])
with strategy.scope():
    optimizer = tf.keras.optimizers.Adam(1e-3, clipnorm=1.0)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

dataset = tf.data.Dataset.from_tensor_slices((tf.zeros([256, 8]), tf.zeros([256], tf.int32)))
dataset = dataset.shuffle(256).batch(GLOBAL_BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
dist_dataset = strategy.experimental_distribute_dataset(dataset)


def train_step(inputs):
    features, labels = inputs
    with tf.GradientTape() as tape:
        logits = model(features, training=True)
        loss = loss_object(labels, logits)
        loss += sum(model.losses)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


@tf.function
def distributed_train_step(inputs):
    per_replica_losses = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)


checkpoint = tf.train.Checkpoint(model=model)
for epoch in range(3):
    for batch in dist_dataset:
        distributed_train_step(batch)
    checkpoint.save("ckpt/ckpt")
