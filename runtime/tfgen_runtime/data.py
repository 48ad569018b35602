"""A run's examples: the declared fields, sources' arrays and datasets checked against
them, random examples of their shapes, and the held-out split."""

import sys
from collections import namedtuple

import numpy as np
import tensorflow as tf

from .errors import UserError
from .imports import function
from .labels import check_labels, first_label_outside
from .strings import (
    FILLS,
    WORDS,
    checked_strings,
    graph_label_ids,
    is_text,
    label_ids,
    label_tables,
    random_strings,
)

FLOATS = ("float16", "bfloat16", "float32", "float64")
WHAT = ("input", "target")

# One model input or target per example: its shape, dtype, (labels) class count and
# (listed class names) the names in id order.
Field = namedtuple("Field", "shape dtype classes names", defaults=[None, None])


def checked_arrays(arrays, fields, what):
    """Name, shape-check and cast a source's arrays to the declared inputs or targets.

    A cast that would change a value (3.7 to an integer, 300 to uint8, NaN to an integer,
    a complex number to a real one), labels outside their target's range (`labels`) and
    unknown class names are errors that name the array and a row.
    """
    if not isinstance(arrays, dict):
        if len(fields) > 1:
            raise UserError(f"one array for the {what}s {list(fields)}: give a dict")
        arrays = {next(iter(fields)): arrays}
    checked = {}
    for name, field in fields.items():
        if name not in arrays:
            raise UserError(f"the source has no {what} `{name}` ({sorted(arrays)})")
        array = np.asarray(arrays[name])
        if field.shape == () and array.shape[1:] == (1,):
            array = array.reshape(-1)  # labels stored as a column, as cifar10 does
        shape = array.shape[1:]
        if not shape_fits(field.shape, shape):
            message = f"{what}s.{name} has examples of shape {shape}"
            raise UserError(f"{message}, the spec declares {field.shape}")
        checked[name] = field_values(array, field, f"{what}s.{name}")
    return checked


def field_values(array, field, name):
    """`array` as the field's values: strings kept, string labels mapped to ids, numbers cast."""
    if field.dtype == "string":
        return checked_strings(array, name)
    if is_text(array):
        return label_ids(array, field, name)
    return lossless_cast(array, field, name)


def shape_fits(declared, shape):
    """Whether examples of `shape` are of the `declared` one (None: any length)."""
    if len(shape) != len(declared):
        return False
    pairs = zip(declared, shape)
    return all(None in (want, have) or want == have for want, have in pairs)


def lossless_cast(array, field, name):
    """`array` in the field's dtype, or UserError where the cast would change a value."""
    if array.dtype.kind == "c":  # a cast to a real dtype would drop the imaginary parts
        row = np.argwhere(np.asarray(array.imag) != 0)
        value = (
            f", e.g. {complex(array[tuple(row[0])]):.4g} at row {row[0][0]}"
            if len(row)
            else ""
        )
        found = f"{name}: complex values ({array.dtype}{value})"
        fix = "give its real part (or its parts as two inputs)"
        raise UserError(f"{found}; the spec declares {field.dtype}: {fix}")
    with np.errstate(invalid="ignore"):  # NaN to an integer: reported below
        cast = array.astype(field.dtype)
    if array.dtype.kind in "biuf" and np.dtype(field.dtype).kind in "biu":
        bad = cast != array  # NaN and infinities too
        if bad.any():
            row = np.argwhere(bad)[0]
            change = f"{bad.sum()} values change when cast"
            value = f"e.g. {array[tuple(row)]} at row {row[0]}"
            raise UserError(f"{name}: {change} to {field.dtype}, {value}")
    if cast.dtype.kind == "f":
        require_finite(cast, name)
    problem = first_label_outside(cast, field, name)
    if problem:
        raise UserError(problem)
    return cast


def require_finite(array, name):
    """UserError naming the first row with a NaN or an infinity.

    Such a value would train or score silently wrong: a NaN feature gives a finite,
    wrong validation loss.
    """
    bad = ~np.isfinite(array)
    if bad.any():
        row = np.argwhere(bad)[0]
        value = f"e.g. {array[tuple(row)]} at row {row[0]}"
        raise UserError(f"{name}: {bad.sum()} non-finite values (NaN or inf), {value}")


def named_examples(data, inputs, targets):
    """A source's `(x, y)` as `({input: x}, {target: y})` arrays or dataset elements."""
    if isinstance(data, tf.data.Dataset):
        return named_dataset(data, inputs, targets)
    require_pair(data)
    x = checked_arrays(data[0], inputs, "input")
    y = checked_arrays(data[1], targets, "target")
    rows = {key: len(array) for part in (x, y) for key, array in part.items()}
    if len(set(rows.values())) > 1:
        raise UserError(f"the arrays have different numbers of rows: {rows}")
    return x, y


def named_dataset(data, inputs, targets):
    """A dataset of `(x, y)` as one of `({input: x}, {target: y})`, its labels checked."""
    require_pair(data.element_spec, gives="gives elements of", one="tensor")
    x_named = isinstance(data.element_spec[0], dict)
    y_named = isinstance(data.element_spec[1], dict)
    tables = label_tables(targets)

    def name(x, y):
        if not x_named:
            x = {next(iter(inputs)): x}
        if not y_named:
            y = {next(iter(targets)): y}
        check_finite(x, "inputs")
        y = graph_label_ids(y, targets, tables)
        check_finite(y, "targets")
        check_labels(y, targets)
        return x, y

    return data.map(name)


def check_finite(values, part):
    """Assert, in the graph as the examples stream, that float values are finite."""
    for key, value in values.items():
        if value.dtype.is_floating:
            message = f"{part}.{key}: non-finite values (NaN or inf)"
            finite = tf.reduce_all(tf.math.is_finite(value))
            tf.debugging.Assert(finite, [message])


def require_pair(data, gives="returned", one="array"):
    """UserError unless `data` is an `(x, y)` pair (arrays, or a dataset's element)."""
    if isinstance(data, tuple | list) and len(data) == 2:
        return
    if isinstance(data, tuple | list):
        found = f"a {type(data).__name__} of {len(data)} items"
    elif hasattr(data, "shape"):
        found = f"one {one} of shape {tuple(data.shape)}"
    else:
        found = f"a {type(data).__name__}"
    raise UserError(f"{gives} {found}, not an `(inputs, targets)` pair")


def element_shape(spec, field, name, reference):
    """UserError unless a dataset's elements of `name` are examples of the field's shape."""
    if spec is None:
        missing = name.replace("s.", " `", 1)
        raise UserError(f"{reference}: its dataset has no {missing}`")
    shape = tuple(spec.shape)
    if (spec.dtype == tf.string) != (field.dtype == "string"):
        found = f"{name} has {spec.dtype.name} elements"
        raise UserError(f"{found}, the spec declares {field.dtype}: {FILLS}")
    if shape_fits(field.shape, shape):
        return
    message = f"{name} has elements of shape {shape}, the spec declares {field.shape}"
    if len(shape) == len(field.shape) + 1:
        hint = "it gives batches (pass batch_size=None to the loader; tfgen batches)"
        message = f"{message}: {hint}"
    raise UserError(message)


def same_twice(dataset, reference, elements=2):
    """Warn when two iterations of `dataset` begin differently.

    Such a dataset shuffles (or draws at random) itself, so a resumed run would differ
    from an uninterrupted one.
    """
    first = list(dataset.take(elements).as_numpy_iterator())
    second = list(dataset.take(elements).as_numpy_iterator())
    leaves = zip(tf.nest.flatten(first), tf.nest.flatten(second))
    if all(np.array_equal(a, b) for a, b in leaves):
        return
    found = f"{reference}: its dataset changes order between iterations"
    fix = "pass it shuffle=False and let tfgen shuffle (data.train.shuffle)"
    why = "a resumed run would differ from an uninterrupted one"
    print(f"warning: {found}: {fix}; else {why}", file=sys.stderr)


def from_function(reference, inputs, targets, spec_dir=None, /, **kwargs):
    """The named examples that a `package.module:function` data source returns.

    `kwargs` are the spec's arguments of that function, passed on to it as they are.
    """
    load = function(reference, spec_dir, "data")
    try:
        data = named_examples(load(**kwargs), inputs, targets)
    except UserError as error:
        raise UserError(f"{reference}: {error}") from None
    if isinstance(data, tf.data.Dataset):
        element_shapes(data, inputs, targets, reference)
        same_twice(data, reference)
    return data


def element_shapes(data, inputs, targets, reference):
    """UserError unless the named dataset's elements are of the declared shapes."""
    for part, fields, what in zip(data.element_spec, (inputs, targets), WHAT):
        for key, field in fields.items():
            element_shape(part.get(key), field, f"{what}s.{key}", reference)


def synthetic_arrays(n, inputs, targets, seed):
    """`n` random examples of the declared shapes, for runs without data files."""
    rng = np.random.default_rng(seed)
    x = {key: random_array(rng, n, field) for key, field in inputs.items()}
    y = {key: random_array(rng, n, field) for key, field in targets.items()}
    return x, y


def random_array(rng, n, field):
    """`n` random values of one field: labels in [0, classes), one-hot rows or noise."""
    shape = (n, *(8 if d is None else d for d in field.shape))  # 8: a variable length
    classes = field.classes
    dtype = field.dtype
    if dtype == "string":
        return random_strings(rng, shape, classes or WORDS)
    if classes and classes > 1 and shape[-1] == classes and dtype in FLOATS:
        labels = rng.integers(0, classes, size=shape[:-1])
        return np.eye(classes, dtype=dtype)[labels]
    if classes is not None:
        return rng.integers(0, classes, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.random(size=shape) < 0.5
    if dtype in FLOATS:
        return rng.random(size=shape).astype(dtype)
    highest = 256 if dtype == "uint8" else 100
    return rng.integers(0, highest, size=shape).astype(dtype)


def split_arrays(data, fraction, seed, stratify=False):
    """Hold out a seeded random `fraction` of the examples (of each class: `stratify`)."""
    if isinstance(data, tf.data.Dataset):
        fix = "give the held-out examples as a `validation` source, or return arrays"
        message = "`validation_split` needs arrays, the source gave a Dataset"
        raise UserError(f"{message}: {fix}")
    labels = next(iter(data[1].values()))
    order = np.random.default_rng(seed).permutation(len(labels))
    held = np.zeros(len(order), bool)
    classes = np.unique(labels) if stratify else []
    groups = [order[labels[order] == label] for label in classes] or [order]
    for rows in groups:
        held[rows[: round(len(rows) * fraction)]] = True
    if len(order) and not held.any():  # (no examples at all: the batch check says so)
        kept = f"{fraction} of {len(order)} examples"
        raise UserError(f"`validation_split` {kept} holds out none: raise it")
    kept_rows = order[~held[order]]
    held_rows = order[held[order]]
    return [rows_of(data, kept_rows), rows_of(data, held_rows)]


def rows_of(data, rows):
    """The examples `rows` of arrays `(x, y)`."""
    return tuple({key: array[rows] for key, array in part.items()} for part in data)


def first_rows(part, n):
    """The first `n` examples of arrays `(x, y)` or of a dataset."""
    if isinstance(part, tf.data.Dataset):
        return part.take(n)
    return tuple({key: array[:n] for key, array in arrays.items()} for arrays in part)
