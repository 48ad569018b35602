"""Strings in a run's examples: string inputs checked, string labels mapped to the ids of
their class names (arrays and datasets), random strings for runs without data files."""

import numpy as np
import tensorflow as tf

from .errors import UserError

# Synthetic strings draw their words from this many (or from the input's vocabulary).
WORDS = 16
FILLS = "strings fill a `dtype: string` input or a class target that lists its names"


def is_text(array):
    """Whether a numpy array holds strings (str, bytes, or objects that all are)."""
    if array.dtype.kind in "US":
        return True
    if array.dtype.kind != "O" or array.size == 0:
        return False
    return all(isinstance(value, str | bytes) for value in array.reshape(-1))


def as_text(value):
    """One string value as str (bytes read as UTF-8; a byte that is not shows as U+FFFD)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def checked_strings(array, name):
    """A string input's examples as a str or bytes array, or UserError naming the array."""
    if array.dtype.kind in "US":
        return array
    if is_text(array):
        texts = [as_text(value) for value in array.reshape(-1)]
        return np.array(texts, dtype=str).reshape(array.shape)
    found = f"{name} holds {array.dtype} values"
    raise UserError(f"{found}, the spec declares strings: {FILLS}")


def label_ids(values, field, where):
    """The class ids of string labels by `field.names` (ids: the list order).

    An unknown label is a UserError naming it and its row; `where` names the file or array.
    """
    values = np.asarray(values)
    if field.names is None:
        declared = f"the spec declares {field.dtype}"
        raise UserError(f"{where} holds strings, {declared}: {FILLS}")
    if np.dtype(field.dtype).kind not in "iu":
        message = f"{where}: string labels are mapped to class ids"
        raise UserError(f"{message}, so the target needs an integer dtype")
    texts = np.array([as_text(value) for value in values.reshape(-1)], dtype=str)
    names, inverse = np.unique(texts, return_inverse=True)
    ids = {name: i for i, name in enumerate(field.names)}
    unknown = [i for i, name in enumerate(names) if name not in ids]
    if unknown:
        first = int(np.flatnonzero(np.isin(inverse, unknown))[0])
        row = np.unravel_index(first, values.shape)[0] if values.ndim else 0
        known = ", ".join(field.names)
        label = f"unknown label {str(texts[first])!r} at row {row}"
        raise UserError(f"{where}: {label} (the classes are {known})")
    mapped = np.array([ids[name] for name in names], dtype=field.dtype)
    return mapped[inverse].reshape(values.shape)


def label_tables(targets):
    """A lookup table from class name to id for each target that lists its class names."""
    tables = {}
    for key, field in targets.items():
        if field.names is None:
            continue
        names = tf.constant(field.names)
        ids = tf.range(len(field.names), dtype=tf.int64)
        initializer = tf.lookup.KeyValueTensorInitializer(names, ids)
        tables[key] = tf.lookup.StaticHashTable(initializer, default_value=-1)
    return tables


def graph_label_ids(y, targets, tables):
    """`y` with string labels mapped to class ids in the graph (an unknown one stops the run)."""
    mapped = dict(y)
    for key, table in tables.items():
        if y[key].dtype != tf.string:
            continue
        ids = table.lookup(y[key])
        message = f"targets.{key}: a label that is not one of the classes"
        names = ", ".join(targets[key].names)
        known = tf.reduce_all(ids >= 0)
        tf.debugging.Assert(known, [message, f"({names})", y[key]])
        mapped[key] = tf.cast(ids, targets[key].dtype)
    return mapped


def random_strings(rng, shape, words):
    """Random strings of `shape`: one to four words of `words` each (`w0 w7 w3`)."""
    count = int(np.prod(shape))
    lengths = rng.integers(1, 5, size=count)
    drawn = rng.integers(0, words, size=int(lengths.sum()))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    texts = [" ".join(f"w{i}" for i in drawn[a:b]) for a, b in zip(starts, ends)]
    return np.array(texts, dtype=str).reshape(shape)
