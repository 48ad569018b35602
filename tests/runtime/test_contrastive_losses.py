"""The contrastive parts of the runtime (runtime/tfgen_runtime/contrastive.py), against numpy:
NT-Xent (both views' negatives, and the other view's only) on one device and gathered over two
mirrored replicas (its loss and its gradient: the global batch's negatives), SimSiam's symmetric stopped cosine, the two keyed views, the linear
probe."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ROOT, Lazy, lazy_import, load_runtime

keras = lazy_import("keras")
tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def nt_xent_reference(a: np.ndarray, b: np.ndarray, temperature: float) -> np.ndarray:
    """SimCLR's NT-Xent per example (the mean of its two views' losses), as the paper writes it."""
    z = np.concatenate([a, b]).astype(np.float64)
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    similarity = z @ z.T / temperature
    n = len(a)
    np.fill_diagonal(similarity, -np.inf)
    positive = np.concatenate([np.arange(n) + n, np.arange(n)])
    rows = np.arange(2 * n)
    log_sum = np.log(np.exp(similarity).sum(axis=1))
    losses = log_sum - similarity[rows, positive]
    return (losses[:n] + losses[n:]) / 2


def other_view_reference(a: np.ndarray, b: np.ndarray, temperature: float) -> np.ndarray:
    """NT-Xent with each view's candidates the other view's projections (keras.io's SimCLR
    example): the cross-entropies of `a @ b.T / t` by rows and by columns, averaged."""
    a, b = (x.astype(np.float64) / np.linalg.norm(x, axis=1, keepdims=True) for x in (a, b))
    similarity = a @ b.T / temperature
    diagonal = np.diag(similarity)
    by_rows = np.log(np.exp(similarity).sum(axis=1)) - diagonal
    by_columns = np.log(np.exp(similarity).sum(axis=0)) - diagonal
    return (by_rows + by_columns) / 2


REFERENCES = {"nt_xent": nt_xent_reference, "nt_xent_other_view": other_view_reference}


def views(n=8, width=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, width)).astype("float32"), rng.normal(size=(n, width)).astype("float32")


def test_nt_xent_equals_the_papers_formula_on_one_device():
    a, b = views()
    loss, hits = rt.nt_xent(tf.constant(a), tf.constant(b), 0.1)
    np.testing.assert_allclose(loss.numpy(), nt_xent_reference(a, b, 0.1), rtol=1e-5)
    assert set(np.unique(hits.numpy())) <= {0.0, 0.5, 1.0}
    same, same_hits = rt.nt_xent(tf.constant(a), tf.constant(a), 0.1)  # identical views: found
    assert np.all(same_hits.numpy() == 1.0) and np.all(same.numpy() < loss.numpy())


def test_nt_xent_other_view_equals_its_formula_and_differs_from_both_views():
    a, b = views()
    loss, hits = rt.nt_xent_other_view(tf.constant(a), tf.constant(b), 0.1)
    np.testing.assert_allclose(loss.numpy(), other_view_reference(a, b, 0.1), rtol=1e-5)
    assert not np.allclose(loss.numpy(), nt_xent_reference(a, b, 0.1), rtol=1e-3)  # fewer negatives
    assert set(np.unique(hits.numpy())) <= {0.0, 0.5, 1.0}
    _, same_hits = rt.nt_xent_other_view(tf.constant(a), tf.constant(a), 0.1)
    assert np.all(same_hits.numpy() == 1.0)


def test_simsiam_loss_is_the_symmetric_negative_cosine_with_stopped_projections():
    p1, z1 = views(seed=1)
    p2, z2 = views(seed=2)
    tensors = [tf.Variable(x) for x in (p1, z1, p2, z2)]
    with tf.GradientTape() as tape:
        loss = rt.simsiam_loss((tensors[0], tensors[1]), (tensors[2], tensors[3]))
    unit = [x / np.linalg.norm(x, axis=1, keepdims=True) for x in (p1, z1, p2, z2)]
    expected = -(unit[0] * unit[3]).sum(1) / 2 - (unit[2] * unit[1]).sum(1) / 2
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
    gradients = tape.gradient(loss, tensors)
    assert gradients[0] is not None and gradients[2] is not None
    assert gradients[1] is None and gradients[3] is None  # the projections' gradients are stopped


def test_two_views_of_a_batch_differ_and_repeat_for_the_same_epoch_and_batch():
    images = np.random.default_rng(0).uniform(size=(16, 8, 8, 1)).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices(({"pixels": images}, {"digit": np.arange(16)})).batch(8)

    def layers():
        return [
            keras.layers.RandomTranslation(0.3, 0.3),
            keras.layers.GaussianNoise(0.1),
        ]

    def first_batch(epoch):
        pair, targets = next(iter(rt.two_views(ds, [layers(), layers()], 42, epoch)))
        return (
            pair["first"]["pixels"].numpy(),
            pair["second"]["pixels"].numpy(),
            targets,
        )

    first, second, targets = first_batch(1)
    assert first.shape == second.shape == (8, 8, 8, 1)
    assert not np.allclose(first, second)  # two independent draws
    again_first, again_second, _ = first_batch(1)  # new layers, same key: the same views
    np.testing.assert_array_equal(first, again_first)
    np.testing.assert_array_equal(second, again_second)
    assert not np.allclose(first_batch(2)[0], first)  # another epoch, other views
    np.testing.assert_array_equal(targets["digit"].numpy(), np.arange(8))


def test_the_linear_probe_scores_separable_representations_perfectly_and_noise_near_chance():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, size=400)
    separable = np.eye(4, dtype="float32")[labels] + rng.normal(scale=0.05, size=(400, 4)).astype("float32")
    noise = rng.normal(size=(400, 4)).astype("float32")
    inputs = {"x": keras.Input((4,), name="x")}
    encoder = keras.Model(inputs, {"representation": keras.layers.Identity()(inputs["x"])})

    def split(x):
        return ({"x": x[:300]}, {"label": labels[:300]}), (
            {"x": x[300:]},
            {"label": labels[300:]},
        )

    def probe(x):
        return rt.linear_probe(encoder, *split(x), "label", 4)

    assert probe(separable) == 1.0
    assert probe(noise) < 0.45  # chance: 0.25
    assert probe(separable) == probe(separable)  # closed form: the same figure every time


TWO_REPLICAS = textwrap.dedent("""
    import numpy as np, tensorflow as tf
    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import tfgen_runtime as rt

    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=(8, 5)).astype("float32") for _ in range(2))
    w0 = rng.normal(size=(5, 5)).astype("float32")
    GLOBAL = 8

    def run(strategy):
        with strategy.scope():
            w = tf.Variable(w0)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss, _ = rt.LOSS(x @ w, y @ w, 0.1)
                mean = tf.nn.compute_average_loss(loss, global_batch_size=GLOBAL)
            gradient = tape.gradient(mean, w)
            total = tf.distribute.get_replica_context().all_reduce("sum", gradient)
            return loss, total

        ds = tf.data.Dataset.from_tensor_slices((a, b)).batch(GLOBAL)
        x, y = next(iter(strategy.experimental_distribute_dataset(ds)))
        loss, gradient = tf.function(lambda x, y: strategy.run(step, args=(x, y)))(x, y)
        losses = np.concatenate([v.numpy() for v in strategy.experimental_local_results(loss)])
        return losses, strategy.experimental_local_results(gradient)[0].numpy()

    one = run(tf.distribute.get_strategy())
    two = run(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    np.save("one_loss.npy", one[0]); np.save("one_gradient.npy", one[1])
    np.save("two_loss.npy", two[0]); np.save("two_gradient.npy", two[1])
    np.save("views.npy", np.stack([a @ w0, b @ w0]))
    """)


@pytest.mark.slow
@pytest.mark.parametrize("loss", list(REFERENCES))
def test_nt_xent_on_two_replicas_is_the_global_batchs_loss_and_gradient(tmp_path, loss):
    """Each replica's rows against the projections gathered from both: the same per-example
    losses as one device on the whole batch, and (the gradient flowing back through the
    gather) the same summed gradient; with both views' negatives and with the other view's."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}/runtime",
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "CUDA_VISIBLE_DEVICES": "-1",
    }
    result = subprocess.run(
        [sys.executable, "-c", TWO_REPLICAS.replace("LOSS", loss)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    a, b = np.load(tmp_path / "views.npy")
    one, two = np.load(tmp_path / "one_loss.npy"), np.load(tmp_path / "two_loss.npy")
    np.testing.assert_allclose(one, REFERENCES[loss](a, b, 0.1), rtol=1e-5)
    np.testing.assert_allclose(two, one, rtol=1e-5)
    gradient_one, gradient_two = np.load(tmp_path / "one_gradient.npy"), np.load(tmp_path / "two_gradient.npy")
    np.testing.assert_allclose(gradient_two, gradient_one, rtol=1e-4, atol=1e-6)
    assert np.abs(gradient_one).max() > 1e-3
