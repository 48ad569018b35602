"""Random augmentation in a tf.data pipeline, keyed by where each batch is in the run:
`(seed, epoch, batch)`, never a generator's running state."""

import keras
import tensorflow as tf

# The variable of a keras.random.SeedGenerator: every Keras random layer draws through one
# (and so does a custom layer that follows Keras's pattern).
SEED_STATE = "seed_generator_state"


def seed_states(layers):
    """The state variables of the seed generators the layers draw from."""
    return [v for layer in layers for v in layer.variables if v.name == SEED_STATE]


def augmented(ds, layers, augment, seed, epoch):
    """`ds.map(augment)`, each batch's random draws keyed by `(seed, epoch, its index)`.

    `augment(features, targets)` runs `layers`. Each call starts their seed generators
    from states derived from the key (keras.StatelessScope) and never reads or advances
    their own, so an epoch resumed with `.skip(step)` draws for its remaining batches
    what the uninterrupted run drew, however the parallel map orders the calls.

    Args:
        ds: batches of `(features, targets)`.
        layers: the random layers `augment` calls.
        augment: the map function.
        seed: the run's seed.
        epoch: the epoch these batches belong to.
    """
    states = seed_states(layers)
    epoch_key = tf.constant([seed, epoch], tf.int64)

    def apply(index, batch):
        key = tf.random.experimental.stateless_fold_in(epoch_key, index)
        starts = [(state, start(key, k, state.dtype)) for k, state in enumerate(states)]
        with keras.StatelessScope(starts):
            return augment(*batch)

    return ds.enumerate().map(apply, num_parallel_calls=tf.data.AUTOTUNE)


def start(key, number, dtype):
    """The state seed generator `number` starts a batch from: the batch's key, folded."""
    return tf.cast(tf.random.experimental.stateless_fold_in(key, number), dtype)
