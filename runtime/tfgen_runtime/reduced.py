"""Gradients summed across replicas once, then applied without a second sum."""

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
