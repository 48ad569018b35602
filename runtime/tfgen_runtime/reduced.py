"""Gradients summed across replicas once, then applied without a second sum; an update
skipped on every replica when it is non-finite on one."""

import tensorflow as tf

from .model_checks import require_gradients

SUMMING = (
    "_all_reduce_sum_gradients"  # what Keras's TensorFlow optimizer sums them with
)


def apply_reduced(optimizer, gradients, variables):
    """`optimizer.apply_gradients` of gradients already summed over the replicas.

    In a replica context, Keras's optimizer sums the gradients across replicas before it
    updates the variables; these are summed already (to clip the true global norm, or so
    that a LossScaleOptimizer sees every replica's inf/NaN): it takes them as they are, so
    a step all-reduces its gradients once.
    """
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    passing = pass_on_summed(inner)
    # Counted, not a flag: a strategy traces each replica's step, taking turns.
    passing.depth += 1
    try:
        optimizer.apply_gradients(zip(gradients, variables))
    finally:
        passing.depth -= 1


def pass_on_summed(optimizer):
    """The optimizer's summing, replaced (once) by one that passes the gradients on while
    `depth` > 0 (while an `apply_reduced` traces)."""
    summing = vars(optimizer).get(SUMMING)
    if isinstance(summing, PassOnSummed):
        return summing
    if not callable(getattr(type(optimizer), SUMMING, None)):
        kind = type(optimizer).__name__
        raise TypeError(
            f"{kind} has no {SUMMING}: this Keras sums gradients some other way"
        )
    passing = PassOnSummed(getattr(optimizer, SUMMING))
    setattr(optimizer, SUMMING, passing)  # an instance attribute, over the method
    return passing


class PassOnSummed:
    """Keras's gradient summing, skipped while `depth` > 0."""

    def __init__(self, summing):
        self.summing = summing
        self.depth = 0

    def __call__(self, grads_and_vars):
        if self.depth > 0:
            return list(grads_and_vars)
        return self.summing(grads_and_vars)


def apply_unless_nonfinite(
    optimizer, gradients, variables, loss=None, skip=False, reduced=False
):
    """`optimizer.apply_gradients` unless `loss` or a gradient is non-finite on some replica,
    or `skip` (an earlier update of the same step was skipped); then skipped on every replica.
    `reduced`: the gradients are summed over the replicas already (apply_reduced applies them).

    Called in a replica context; returns whether it skipped (the same on every replica), for
    the step's later updates. The decision is taken in the cross-replica context: a cond
    around apply_gradients (which all-reduces) is not allowed inside a replica.
    """
    finite = [
        tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g))) for g in gradients
    ]
    if scaled(optimizer):  # a LossScaleOptimizer skips them itself
        finite = []
    if loss is not None:
        finite.append(tf.math.is_finite(loss))
    bad = tf.logical_or(tf.logical_not(tf.reduce_all(finite)), skip)
    context = tf.distribute.get_replica_context()
    skipped = context.all_reduce("sum", tf.cast(bad, tf.float32)) > 0

    def cross_replica(strategy, gradients, skipped):
        def apply():
            strategy.extended.call_for_each_replica(
                lambda g: update(optimizer, g, variables, reduced), args=(gradients,)
            )
            return tf.constant(True)

        tf.cond(
            strategy.experimental_local_results(skipped)[0],
            lambda: tf.constant(False),
            apply,
        )

    context.merge_call(cross_replica, args=(gradients, skipped))
    return skipped


def update(optimizer, gradients, variables, reduced):
    """Apply the gradients (`reduced`: summed over the replicas already)."""
    if reduced:
        apply_reduced(optimizer, gradients, variables)
    else:
        optimizer.apply_gradients(zip(gradients, variables))


def scaled(optimizer):
    """Whether `optimizer` is a LossScaleOptimizer (float16)."""
    return hasattr(optimizer, "scale_loss") and hasattr(optimizer, "inner_optimizer")


def scaled_gradients(optimizer, tape, loss, variables):
    """The gradients of `loss` times the LossScaleOptimizer's scale (as `output_gradients`:
    the loss itself is not changed); its update unscales them."""
    scale = optimizer.scale_loss(tf.ones_like(loss))
    return tape.gradient(loss, variables, output_gradients=scale)


def summed_scaled_gradients(optimizer, tape, loss, variables):
    """`scaled_gradients` (a None one an error naming its variable), summed over the replicas:
    apply them with `apply_reduced` (or `apply_unless_nonfinite(..., reduced=True)`). The
    LossScaleOptimizer then skips an update that is non-finite on any replica and halves its
    scale; given one replica's gradients, it checks that replica's alone (Keras 3.15.1), and
    the others apply the inf."""
    gradients = scaled_gradients(optimizer, tape, loss, variables)
    require_gradients(gradients, variables)
    return tf.distribute.get_replica_context().all_reduce("sum", gradients)
