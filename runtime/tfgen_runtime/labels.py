"""What a class target's labels may be: one label per example (shape `[]` or `[1]`) is a
class id in [0, classes); on a float target of two classes (or one), a label in [0, 1],
as BinaryCrossentropy reads it (0, 1, or a soft label between them).

Every source checks its labels by these rules before training (arrays, CSV rows, TFRecord
records) or, for a dataset that streams, in the graph (`labels_within`).
"""

import numpy as np
import tensorflow as tf

FLOATS = ("float16", "bfloat16", "float32", "float64")


def is_labelled(field):
    """Whether the field holds one class label per example (a class target of shape `[]`
    or `[1]`; a one-hot row is not one label)."""
    return bool(field.classes) and tuple(field.shape) in ((), (1,))


def is_binary(field):
    """Whether the field's labels are binary floats, soft labels allowed (in [0, 1])."""
    return field.dtype in FLOATS and field.classes <= 2


def labels_allowed(field):
    """The labels the field takes, in words: `[0, 3)`, or `[0, 1] (binary: ...)`."""
    if is_binary(field):
        return "[0, 1] (a binary target's label is 0, 1 or a soft label between)"
    return f"[0, {field.classes})"


def labels_outside(values, field):
    """A bool per example (numpy): whether its label breaks the field's rule (a NaN does)."""
    labels = np.asarray(values).reshape(-1).astype(np.float64)  # `[]` or `[1]` each
    if is_binary(field):
        good = (labels >= 0) & (labels <= 1)
    else:
        whole = labels == np.floor(labels)
        good = whole & (labels >= 0) & (labels < field.classes)
    return ~good


def first_label_outside(values, field, name):
    """None, or the one line naming the first label (and how many) outside the field's rule."""
    if not is_labelled(field):
        return None
    bad = labels_outside(values, field)
    if not bad.any():
        return None
    row = int(np.argmax(bad))
    value = np.asarray(values).reshape(-1)[row]
    found = f"{bad.sum()} labels outside {labels_allowed(field)}"
    return f"{name}: {found}, e.g. {value} at row {row}"


def labels_within(labels, field):
    """A bool tensor: whether every one of a batch's labels keeps the field's rule."""
    values = tf.cast(tf.reshape(labels, [-1]), tf.float64)
    if is_binary(field):
        good = (values >= 0) & (values <= 1)
    else:
        whole = tf.equal(values, tf.floor(values))
        good = whole & (values >= 0) & (values < field.classes)
    return tf.reduce_all(good)


def check_labels(y, targets):
    """Assert, in the graph as the labels stream, that each keeps its target's rule."""
    for key, field in targets.items():
        if is_labelled(field) and y[key].dtype != tf.string:
            message = f"targets.{key}: labels outside {labels_allowed(field)}"
            tf.debugging.Assert(labels_within(y[key], field), [message, y[key]])
