"""The step of specs/custom_step.yaml: label smoothing on inputs jittered by seeded noise.

tfgen calls `train_step(networks, features, targets, ctx)` once per replica, inside the
strategy's run and a tf.function (docs/algorithms.md#custom).
"""

import tensorflow as tf

SMOOTHING = 0.1  # the share of each label's probability spread over every class
JITTER = 0.5  # the noise's standard deviation, in pixel units (0-16)


def train_step(networks, features, targets, ctx):
    """One update of the classifier; per-example figures, as `logs` declares them."""
    classifier = networks["classifier"]
    pixels = features["pixels"] + ctx.normal(
        [64], stddev=JITTER
    )  # same on any replica count
    labels = tf.one_hot(targets["digit"], 10)
    with tf.GradientTape() as tape:
        logits = classifier({"pixels": pixels}, training=True)["digit"]
        per_example = tf.keras.losses.categorical_crossentropy(
            labels, logits, from_logits=True, label_smoothing=SMOOTHING
        )
        loss = ctx.average(per_example) + ctx.regularization(classifier)
    ctx.apply("classifier", tape, loss)
    hits = tf.equal(tf.argmax(logits, axis=-1, output_type=tf.int32), targets["digit"])
    return {"loss": per_example, "accuracy": tf.cast(hits, tf.float32)}
