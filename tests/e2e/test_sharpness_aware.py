"""Sharpness-aware minimisation (`train.sharpness_aware`), run for real: the update is SAM's,
computed here by hand, and it is the same on one replica and on two."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_module
from conftest import replica_independent_spec as _spec
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow

RHO = 0.5


def sam_spec(**overrides):
    spec = _spec(**overrides)
    spec["model"]["layers"][0]["kernel_regularizer"] = {"type": "L2", "l2": 0.01}
    spec["train"] = {"epochs": 2, "sharpness_aware": {"rho": RHO}}
    return spec


def by_hand(module, initial, rows, rho):
    """One SGD step of the script's model from `initial` on the training rows `rows`: SAM's
    (the gradient at w + rho g/|g|, applied at w) and the plain one."""
    import tensorflow as tf

    model = module.build_model()
    model.set_weights(initial)
    train, _ = module.load_data()
    features = {k: tf.constant(x[rows]) for k, x in train[0].items()}
    targets = {k: tf.constant(y[rows]) for k, y in train[1].items()}

    def gradient():
        with tf.GradientTape() as tape:
            losses = module.per_example_losses(targets, model(features, training=True))
            loss = tf.reduce_mean(tf.add_n(list(losses.values()))) + tf.add_n(model.losses)
        return tape.gradient(loss, model.trainable_variables)

    plain = gradient()
    norm = tf.linalg.global_norm(plain)
    for v, g in zip(model.trainable_variables, plain, strict=True):
        v.assign_add(rho * g / norm)
    sharp = gradient()
    start = [np.array(w) for w in initial]
    step = lambda gradients: [w - 0.1 * g.numpy() for w, g in zip(start, gradients, strict=True)]
    return step(sharp), step(plain)


def test_sam_applies_the_gradient_taken_at_the_worst_weights_within_rho(build_spec, tmp_path):
    script = build_spec(sam_spec(), stem="sam")
    _, weights, _, _ = _harness(script, tmp_path, "sam", "--epochs", "1", "--steps-per-epoch", "1")
    initial = list(np.load(tmp_path / "sam-init.npz").values())
    sharp, plain = by_hand(load_module(script), initial, slice(0, 32), RHO)
    for ours, theirs in zip(weights, sharp, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert not all(np.allclose(a, b, atol=1e-4) for a, b in zip(weights, plain, strict=True))


def test_sam_on_two_replicas_matches_one_device(build_spec, tmp_path):
    one = build_spec(sam_spec(), stem="one")
    two = build_spec(sam_spec(strategy={"type": "mirrored"}), stem="two")
    _, w1, h1, _ = _harness(one, tmp_path, "one", cpus=2)
    _, w2, h2, out2 = _harness(two, tmp_path, "two", cpus=2)
    assert "2 replica(s)" in out2
    assert [r["loss"] for r in h2] == pytest.approx([r["loss"] for r in h1], rel=1e-5)
    for a, b in zip(w1, w2, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
