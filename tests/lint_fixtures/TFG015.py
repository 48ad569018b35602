import tensorflow as tf


def train(model, optimizer, pairs):
    checkpoint = tf.train.Checkpoint(model=model)  # expect: TFG015
    optimizer.apply_gradients(pairs)
    return checkpoint


# %% separate file: save_weights as the training loop's only checkpoint
def train(model, optimizer, pairs):
    for epoch in range(3):
        optimizer.apply_gradients(pairs)
        model.save_weights("w.weights.h5")  # expect: TFG015


# %% separate file: the fixed form
import tensorflow as tf


def train(model, optimizer, pairs):
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, "checkpoints", max_to_keep=3)
    for epoch in range(3):
        optimizer.apply_gradients(pairs)
        manager.save()
