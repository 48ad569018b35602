"""The terms a model's layers add to the loss (`self.add_loss(...)` in a layer's `call`, and
activity regularizers), each logged by its layer's name: `<layer name>_loss`.

The step adds them to the loss with the weights' regularization (`regularization_loss` reads
`model.losses`, which holds both); these functions only name and read them for the history.
Keras keeps no public per-layer list of the terms a call added: a layer's own terms are its
`_get_own_losses()`, reset at the start of each call of the model.
"""

import keras
import tensorflow as tf

from .errors import UserError

SUFFIX = "_loss"


def layer_loss_names(model):
    """The history names of the terms the model's layers add, sorted: the layers that call
    `add_loss` in a call of the model, found by tracing one (nothing runs: no weight, random
    state or statistic changes). A model without a declared input (a subclassed builder's) is
    not traced: its terms are in the loss, not logged apart."""
    try:
        structure = model.input
    except (AttributeError, ValueError):
        return []
    specs = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), structure)

    names = set()

    @tf.function(autograph=False)
    def call(inputs):
        model(inputs, training=True)
        names.update(name for name, _ in own_losses(model))
        model._clear_losses()  # the traced terms belong to no run
        return tf.constant(0)

    call.get_concrete_function(specs)
    return sorted(names)


def layer_losses(model):
    """`{"<layer name>_loss": the sum of the terms that layer added}` in the model's last call
    (read it after the call, before the next one); layers of one name are summed."""
    terms = {}
    for name, own in own_losses(model):
        term = tf.add_n([tf.cast(t, tf.float32) for t in own])
        terms[name] = terms[name] + term if name in terms else term
    return terms


def own_losses(model):
    """`(history name, the terms it added)` of each of the model's layers that added some."""
    layers = model._flatten_layers(include_self=True)
    pairs = [(f"{layer.name}{SUFFIX}", layer._get_own_losses()) for layer in layers]
    return [(name, own) for name, own in pairs if own]


def with_layer_losses(metrics, names):
    """`metrics` and a Mean for each of the layers' terms `names`; UserError (one line) when
    a name is already one of the history's, as `<output>_loss` is."""
    for name in names:
        if name in metrics:
            layer = name.removesuffix(SUFFIX)
            raise UserError(
                f"the layer `{layer}` adds a loss (add_loss), logged as `{name}`, a name the "
                f"history already has: give the layer another `name`"
            )
    return {**metrics, **{name: keras.metrics.Mean(name=name) for name in names}}
