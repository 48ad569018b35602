"""Self-supervised contrastive learning: two views of each example, their losses over the
global batch (SimCLR's NT-Xent, SimSiam's negative cosine), and the linear probe that scores
a frozen encoder's representations each epoch."""

import numpy as np
import tensorflow as tf

from .augmentation import augmented
from .caches import as_dataset

PROBE_BATCH = 256  # examples encoded per call by the probe
PROBE_RIDGE = 1e-3  # the probe's ridge penalty, on standardized representations


def two_views(ds, views, seed, epoch):
    """`ds`'s batches as `({"first": features, "second": features}, targets)`: each input of
    the features through `views[0]` and `views[1]` (two lists of random layers, so the two
    draw independently), keyed by `(seed, epoch, batch)` as `augmented` keys them: the same
    views on any number of replicas, and again when an epoch is resumed.

    Args:
        ds: batches of `(features, targets)` (the global batch: views are drawn before the
            batch is split among replicas).
        views: two lists of the same random layers (`build_views()` called twice).
        seed: the run's seed.
        epoch: the epoch these batches belong to.
    """

    def apply(features, targets):
        pair = {}
        for name, layers in zip(("first", "second"), views):
            pair[name] = {k: viewed(x, layers) for k, x in features.items()}
        return pair, targets

    return augmented(ds, [*views[0], *views[1]], apply, seed, epoch)


def viewed(x, layers):
    """`x` through the random layers (training mode), in its own dtype."""
    y = x
    for layer in layers:
        y = layer(y, training=True)
    return tf.cast(y, x.dtype)


def nt_xent(first, second, temperature):
    """SimCLR's NT-Xent loss of this replica's examples, per example, against the GLOBAL batch.

    Each replica's projections are gathered (`all_gather`, which is differentiable: a
    replica's gradient reaches the others'), so an example's negatives are the other
    2N - 2 views of the global batch of N, whatever the number of replicas. Per example:
    the mean of its two views' cross-entropies, each view's positive being the other view
    among the 2N - 1 candidates, of cosine similarities divided by `temperature`.

    Args:
        first: this replica's projections of the first views, `[n, ...]`.
        second: of the second views, `[n, ...]`.
        temperature: the softmax temperature.

    Returns:
        `(loss, hits)`: each `[n]`: the loss per example, and 1.0 where each view's most
        similar candidate is its positive (`contrastive_accuracy`), else 0.0 (halves).
    """
    context = tf.distribute.get_replica_context()
    a = unit_rows(first)
    b = unit_rows(second)
    everyone = tf.concat([context.all_gather(a, 0), context.all_gather(b, 0)], axis=0)
    n = tf.shape(a)[0]
    total = tf.shape(everyone)[0] // 2  # the global batch
    mine = tf.cast(context.replica_id_in_sync_group, tf.int32) * n + tf.range(n)
    losses = []
    hits = []
    for anchors, own, positive in ((a, mine, mine + total), (b, mine + total, mine)):
        logits = tf.matmul(anchors, everyone, transpose_b=True) / temperature
        logits -= tf.one_hot(
            own, 2 * total, on_value=1e9, dtype=logits.dtype
        )  # not itself
        losses.append(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=positive, logits=logits
            )
        )
        best = tf.argmax(logits, axis=1, output_type=tf.int32)
        hits.append(tf.cast(tf.equal(best, positive), tf.float32))
    return (losses[0] + losses[1]) / 2.0, (hits[0] + hits[1]) / 2.0


def nt_xent_other_view(first, second, temperature):
    """NT-Xent with each view's candidates the OTHER view's projections of the GLOBAL batch
    (`negatives: other_view`, as keras.io's SimCLR example writes it): N candidates, the
    positive among them, so N - 1 negatives. Per example: the mean of its two views'
    cross-entropies. The global similarities are computed once, as keras.io does (this
    replica's rows score its first views, its columns its second views), so that on one
    device the loss and its gradient are keras.io's to the last bit.

    Args:
        first: this replica's projections of the first views, `[n, ...]`.
        second: of the second views, `[n, ...]`.
        temperature: the softmax temperature.

    Returns:
        `(loss, hits)` as `nt_xent` gives them.
    """
    context = tf.distribute.get_replica_context()
    a = context.all_gather(unit_rows(first), 0)
    b = context.all_gather(unit_rows(second), 0)
    n = tf.shape(first)[0]
    mine = tf.cast(context.replica_id_in_sync_group, tf.int32) * n + tf.range(n)
    similarities = tf.matmul(a, b, transpose_b=True) / temperature
    losses = []
    hits = []
    for scores in (similarities, tf.transpose(similarities)):
        logits = tf.gather(scores, mine)
        losses.append(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=mine, logits=logits)
        )
        best = tf.argmax(logits, axis=1, output_type=tf.int32)
        hits.append(tf.cast(tf.equal(best, mine), tf.float32))
    return (losses[0] + losses[1]) / 2.0, (hits[0] + hits[1]) / 2.0


def simsiam_loss(first, second):
    """SimSiam's symmetric loss per example, of `first = (p1, z1)` and `second = (p2, z2)`
    (predictions and projections): `D(p1, stop(z2)) / 2 + D(p2, stop(z1)) / 2`, with D the
    negative cosine similarity. Per example, so no replica needs another's rows."""
    p1, z1 = first
    p2, z2 = second
    return (
        negative_cosine(p1, tf.stop_gradient(z2)) / 2.0
        + negative_cosine(p2, tf.stop_gradient(z1)) / 2.0
    )


def negative_cosine(p, z):
    """`-cos(p, z)` per row."""
    return -tf.reduce_sum(unit_rows(p) * unit_rows(z), axis=1)


def unit_rows(z):
    """Each example's values as one row of length 1 (`[n, ...]` to `[n, d]`)."""
    rows = tf.reshape(z, [tf.shape(z)[0], -1])
    return tf.math.l2_normalize(tf.cast(rows, tf.float32), axis=1)


def linear_probe(encoder, train, validation, target, classes):
    """The accuracy on `validation` of a linear classifier of the frozen `encoder`'s
    representations, fitted on `train`'s: ridge least squares on one-hot labels, closed
    form (deterministic: a resumed run logs the same figure), of representations
    standardized by the training split's mean and deviation.

    Args:
        encoder: the keras.Model (one output: the representation), run in inference mode.
        train: `(features, targets)` arrays or a dataset of examples.
        validation: the same, to score the classifier on.
        target: the name of the class target (`algorithm.probe`).
        classes: its number of classes.
    """
    x, y = representations(encoder, train, target)
    mean = x.mean(axis=0)
    deviation = x.std(axis=0) + 1e-8
    weights = ridge_fit(with_bias((x - mean) / deviation), np.eye(classes)[y])
    x, y = representations(encoder, validation, target)
    scores = with_bias((x - mean) / deviation) @ weights
    return float(np.mean(np.argmax(scores, axis=1) == y))


def representations(encoder, data, target):
    """`(representations [n, d] float64, labels [n] int)` of the examples of `data`."""
    parts = []
    labels = []
    for features, targets in as_dataset(data).batch(PROBE_BATCH):
        outputs = encoder(features, training=False)
        z = next(iter(outputs.values())) if isinstance(outputs, dict) else outputs
        parts.append(np.reshape(z.numpy(), (z.shape[0], -1)).astype(np.float64))
        labels.append(np.reshape(targets[target].numpy(), (-1,)).astype(np.int64))
    return np.concatenate(parts), np.concatenate(labels)


def with_bias(x):
    return np.concatenate([x, np.ones((len(x), 1))], axis=1)


def ridge_fit(x, y):
    """`argmin |xW - y|^2 + PROBE_RIDGE * n |W|^2`: the probe's weights."""
    penalty = PROBE_RIDGE * len(x) * np.eye(x.shape[1])
    return np.linalg.solve(x.T @ x + penalty, x.T @ y)
