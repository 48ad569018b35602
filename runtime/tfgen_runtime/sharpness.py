"""Sharpness-aware minimisation (SAM): the ascent to the worst nearby weights, and the
gradients taken there (`train.sharpness_aware`).

The ascent follows the gradient of the global batch (summed across replicas), so every
replica perturbs its copy of the weights alike; the weights themselves are never assigned:
the second pass runs `model.stateless_call` on the perturbed values.
"""

import tensorflow as tf


def worst_weights(model, variables, gradients, rho):
    """The model's trainable weights moved by `rho` along the global gradient's direction
    (`w + rho * g / |g|`), in `model.trainable_variables`' order; a weight outside
    `variables` (frozen in this phase) stays where it is."""
    summed = tf.distribute.get_replica_context().all_reduce("sum", gradients)
    scale = rho / (tf.linalg.global_norm(summed) + 1e-12)
    ascent = {
        id(v): tf.cast(scale, g.dtype) * g
        for v, g in zip(variables, summed, strict=True)
    }
    return [
        v.value + ascent[id(v)] if id(v) in ascent else v.value
        for v in model.trainable_variables
    ]


def gradients_at(tape, loss, model, variables, worst):
    """The gradients of `loss` for `variables`: a model weight's taken at its value in
    `worst`, any other variable's (a loss weighting's) at the variable itself."""
    position = {id(v): i for i, v in enumerate(model.trainable_variables)}
    sources = [worst[position[id(v)]] if id(v) in position else v for v in variables]
    return tape.gradient(loss, sources)
