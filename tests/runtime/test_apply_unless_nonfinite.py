"""rt.apply_unless_nonfinite, the update the gan and custom steps skip when non-finite: applied
when finite, skipped (weights, slots and iterations unchanged) on a non-finite gradient or loss,
or when an earlier update of the step was skipped; it returns whether it skipped."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
import tfgen_runtime as rt


def test_a_non_finite_update_or_one_after_a_skip_is_skipped_and_says_so():
    weights = tf.Variable([1.0, 2.0])
    optimizer = keras.optimizers.Adam(0.1)
    optimizer.build([weights])

    @tf.function(autograph=False)
    def update(gradient, loss, skip):
        strategy = tf.distribute.get_strategy()
        return strategy.run(lambda: rt.apply_unless_nonfinite(optimizer, [gradient], [weights], loss, skip))

    finite, nan = tf.constant([1.0, 1.0]), tf.constant([np.nan, 1.0])
    cases = [(nan, 1.0, False, True), (finite, np.inf, False, True), (finite, 1.0, True, True)]
    for gradient, loss, skip, skipped in cases:
        assert bool(update(gradient, tf.constant(loss), tf.constant(skip))) is skipped
        np.testing.assert_array_equal(weights.numpy(), [1.0, 2.0])
        assert int(optimizer.iterations.numpy()) == 0
    assert not bool(update(finite, tf.constant(1.0), tf.constant(False)))
    assert int(optimizer.iterations.numpy()) == 1 and np.isfinite(weights.numpy()).all()
    assert (weights.numpy() < [1.0, 2.0]).all()
