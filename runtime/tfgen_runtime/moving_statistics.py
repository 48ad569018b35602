"""BatchNormalization's moving statistics kept one across replicas: averaged after every step.

Keras 3 gives each replica its own copy of a BatchNormalization layer's moving mean and
variance (aggregation "none"), and each replica updates its copy from its own part of the
global batch: the replicas then validate with different statistics, and a checkpoint or an
export keeps the first replica's, so a run resumed from it validates unlike the run it
continues. Averaged over the replicas after each step, the copies stay one: the mean of the
replicas' statistics (tf.keras 2 read them as that mean), the same on any resume.
"""

import keras
import tensorflow as tf


def average_moving_statistics(model):
    """In a replica's step, after its update: each trained BatchNormalization layer's moving
    statistics in `model`, set on every replica to their mean over the replicas.

    Nothing on one replica. A `synchronized` layer's statistics are computed from the global
    batch (one already), and a frozen layer's are not updated: neither is averaged.
    """
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return
    variables = per_replica_statistics(model)
    if not variables:
        return
    means = context.all_reduce("mean", [tf.identity(v.value) for v in variables])
    for variable, mean in zip(variables, means):
        variable.assign(mean)


def per_replica_statistics(model):
    """The moving statistics each replica updates on its own: those of the trained, not
    `synchronized` BatchNormalization layers of `model` (read when a step is traced, so a
    phase that freezes a layer leaves its statistics out)."""
    layers = [
        layer
        for layer in model._flatten_layers()
        if isinstance(layer, keras.layers.BatchNormalization)
        and layer.trainable
        and not layer.synchronized
    ]
    names = (
        "moving_mean",
        "moving_variance",
        "moving_stddev",
        "renorm_mean",
        "renorm_stddev",
    )
    return [getattr(layer, n) for layer in layers for n in names if hasattr(layer, n)]
