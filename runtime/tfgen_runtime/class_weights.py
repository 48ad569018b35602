"""Class weights (`losses.<output>.class_weight`) and example weights
(`data.train.sample_weight`): found once from the training data, checked, and applied to
each training example's loss before the batch average."""

import numpy as np
import tensorflow as tf

from .errors import UserError
from .files import FileExamples

# The targets' key of each example's weight: not an identifier, so never a target's name.
SAMPLE_WEIGHT = "sample-weight"
COUNTED_LABELS = 4096  # labels counted together in one pass over a streamed source


def class_weights(train, targets, requested):
    """{target: [weight of class 0, 1, ...]}: the weights of `requested` (`{class id:
    weight}`, a class not listed weighs 1), or `balanced` ones counted on `train`."""
    found = {}
    for name, asked in requested.items():
        field = targets[name]
        if asked != "balanced":
            found[name] = [float(asked.get(c, 1.0)) for c in range(field.classes)]
            continue
        counts = label_counts(train, name, field)
        found[name] = balanced(counts, name)
        shown = ", ".join(f"{weight:.4g}" for weight in found[name])
        print(f"balanced class weights of `{name}`: {shown} ({counts.sum()} labels)")
    return found


def balanced(counts, name):
    """n_examples / (n_classes * count) per class (scikit-learn's `balanced`)."""
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        where = f"losses.{name}.class_weight: balanced"
        why = f"class {empty[0]} has no training example"
        raise UserError(f"{where}: {why} (give the weights as a mapping)")
    weights = counts.sum() / (len(counts) * counts.astype(np.float64))
    return [float(weight) for weight in weights]


def label_counts(train, name, field):
    """How many training examples of each class the target `name` has: from the arrays,
    a folder's file list (no file is read), or one pass over a dataset (which reads the
    features too)."""
    if isinstance(train, FileExamples):
        ids = class_ids(tf.constant(train.labels), field)
    elif isinstance(train, tf.data.Dataset):
        only = train.map(lambda features, targets: targets[name])
        batches = only.batch(COUNTED_LABELS).map(lambda y: class_ids(y, field))
        ids = np.concatenate([[], *batches.as_numpy_iterator()])
    else:
        ids = class_ids(tf.constant(train[1][name]), field)
    return np.bincount(np.asarray(ids, np.int64), minlength=field.classes)


def class_ids(labels, field):
    """Each example's class: its id, its 0/1 label rounded, or its one-hot row's argmax
    (as Keras's `class_weight` reads labels)."""
    if len(field.shape) == 1 and field.shape[0] == field.classes > 1:
        ids = tf.argmax(labels, axis=-1)
    else:
        ids = tf.reshape(labels, [-1])  # `[]` or `[1]`: one label per example
        if ids.dtype.is_floating:
            ids = tf.round(ids)
    return tf.clip_by_value(tf.cast(ids, tf.int32), 0, field.classes - 1)


def weigh_losses(task_losses, targets, tables, fields):
    """Each output's per-example losses times the class weight of each example's label
    (`tables`: {target: weights by class id}) and its own weight (when the targets hold
    one)."""
    weighted = dict(task_losses)
    for name, table in tables.items():
        ids = class_ids(targets[name], fields[name])
        loss = weighted[name]
        weighted[name] = loss * tf.gather(tf.cast(table, loss.dtype), ids)
    if SAMPLE_WEIGHT in targets:
        weights = targets[SAMPLE_WEIGHT]
        weighted = {
            k: loss * tf.cast(weights, loss.dtype) for k, loss in weighted.items()
        }
    return weighted


def with_sample_weights(data, values, where):
    """Arrays `(x, y)` with each example's weight added to `y` (see `sample_weights`)."""
    x, y = data
    rows = len(next(iter(y.values())))
    return x, {**y, SAMPLE_WEIGHT: sample_weights(values, rows, where)}


def sample_weights(values, rows, where):
    """One finite, non-negative float32 weight per example, or UserError naming `where`."""
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array.reshape(-1)  # a column
    if array.shape != (rows,):
        found = f"shape {array.shape}, not one weight per example ({rows},)"
        raise UserError(f"{where}: example weights of {found}")
    if array.dtype.kind not in "biuf":
        raise UserError(
            f"{where}: example weights must be numbers, found {array.dtype}"
        )
    weights = array.astype(np.float32)
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        row = int(np.argmax(bad))
        what = f"{bad.sum()} weights that are negative or not finite"
        raise UserError(f"{where}: {what}, e.g. {array[row]} at row {row}")
    return weights
