"""The rows of a CSV file: parsed into examples (`parse_lines`, in tf.data or eagerly),
and checked before training (`check_lines`), a bad value named by its row and column."""

import re

import numpy as np
import tensorflow as tf

from .class_weights import SAMPLE_WEIGHT
from .errors import UserError
from .labels import is_labelled, labels_allowed, labels_outside

FLOATS = ("float16", "bfloat16", "float32", "float64")
SHOWN_CHARACTERS = 40  # of a bad value, in its error


def parse_lines(lines, layout):
    """`({input: x}, {target: y})` tensors of a batch of lines (checked before)."""
    return examples(decode(lines, layout), layout)


def decode(lines, layout):
    """The fields of a batch of lines: one string tensor per column of the header."""
    width = len(layout.header)
    return tf.io.decode_csv(lines, [""] * width, field_delim=layout.delimiter)


def examples(fields, layout):
    """`({input: x}, {target: y})` tensors of a batch's fields."""
    parts = {"x": {}, "y": {}}
    for item in layout.items:
        values = [
            column_values(fields[i], item.field, layout.na_values) for i in item.columns
        ]
        value = tf.stack(values, axis=-1) if item.stacked else values[0]
        if item.field.shape == (1,) and not item.stacked:
            value = value[:, None]  # one column fills a shape [1]
        parts[item.part][item.name] = value
    return parts["x"], parts["y"]


def column_values(strings, field, na_values):
    """One column's text as the field's values: strings, class ids of named labels, or
    numbers (a float column's missing values are NaN)."""
    if field.dtype == "string":
        return strings
    if field.names:  # every label was checked to be one of them
        same = tf.equal(strings[:, None], tf.constant(field.names)[None, :])
        return tf.cast(tf.argmax(tf.cast(same, tf.int32), axis=1), field.dtype)
    if field.dtype not in FLOATS:
        return tf.cast(tf.strings.to_number(strings, tf.int64), field.dtype)
    if na_values:
        strings = tf.where(missing(strings, na_values), "nan", strings)
    parsed = tf.float64 if field.dtype == "float64" else tf.float32
    return tf.cast(tf.strings.to_number(strings, parsed), field.dtype)


def missing(strings, na_values):
    """Whether each of `strings` is one of the `na_values`."""
    same = tf.equal(strings[:, None], tf.constant(na_values)[None, :])
    return tf.reduce_any(same, axis=1)


def lines_hash(lines):
    """A fingerprint (int64) of a batch of lines: of their text and their order."""
    joined = tf.strings.reduce_join(lines, separator="\n")
    return tf.strings.to_hash_bucket_fast(joined, 2**63 - 1)


def check_lines(lines, first_row, layout):
    """The fields of a batch of lines (rows `first_row`...), or UserError naming the file,
    the row and the column of its first bad value: a ragged row, a value that is not a
    number of its column's dtype or does not fit it, a missing value where none may be, a
    label that is not a class name."""
    fields = decoded(lines, first_row, layout)
    for item in layout.items:
        for index in item.columns:
            where = Where(layout.path, first_row, layout.header[index])
            check_column(fields[index], item.field, layout.na_values, where)
            if item.name == SAMPLE_WEIGHT:
                check_weights(fields[index], where)
    return fields


def check_weights(strings, where):
    """UserError at the first negative example weight (its column was checked finite)."""
    negative = (tf.strings.to_number(strings, tf.float32) < 0).numpy()
    if negative.any():
        index = int(np.argmax(negative))
        value = f"the example weight {shown(strings[index])} is negative"
        raise UserError(f"{where(index)}: {value} (weights are 0 or more)")


class Where:
    """Names a value's place in its file: `<file>: row <n>, column `<name>``."""

    def __init__(self, path, first_row, column):
        self.path = path
        self.first_row = first_row
        self.column = column

    def __call__(self, index):
        row = self.first_row + int(index)
        return f"{self.path}: row {row}, column `{self.column}`"


def decoded(lines, first_row, layout):
    """The batch's fields (strings); UserError naming the first row that does not parse."""

    def parse(part):
        return decode(part, layout)

    try:
        return parse(lines)
    except tf.errors.InvalidArgumentError:
        index = first_failing(int(tf.size(lines)), lambda n: fails(parse, lines[:n]))
    try:
        parse(lines[index : index + 1])
    except tf.errors.InvalidArgumentError as error:
        problem = row_problem(error.message, layout.header)
        raise UserError(f"{layout.path}: row {first_row + index}: {problem}") from None
    raise AssertionError("a batch failed to parse but none of its rows does")


def row_problem(message, header):
    """A row's parse error in a few words, naming the column where it goes wrong."""
    counted = re.search(r"Expect \d+ fields but have (\d+)", message)
    if not counted:
        text = re.sub(r"\{\{[^}]*\}\}|\[Op:\w+\]", "", message).strip()  # TF's op names
        return f"not CSV: {text.splitlines()[0]}"
    have = int(counted[1])
    columns = f"{have} fields, the header has {len(header)} columns"
    if have == 0:
        return f"an empty line ({columns})"
    if have < len(header):
        return f"{columns}: no value for column `{header[have]}`"
    return f"{columns}: a value after the last column `{header[-1]}`"


def fails(operation, values):
    """Whether `operation(values)` raises InvalidArgumentError."""
    try:
        operation(values)
    except tf.errors.InvalidArgumentError:
        return True
    return False


def first_failing(count, fails_on_first):
    """The index of the first bad item: `fails_on_first(n)` tells whether the first `n`
    items hold one (true for `count`), found by bisection."""
    good = 0
    bad = count
    while bad - good > 1:
        middle = (good + bad) // 2
        if fails_on_first(middle):
            bad = middle
        else:
            good = middle
    return bad - 1


def check_column(strings, field, na_values, where):
    """UserError at the first bad value of one column of a batch (see check_lines)."""
    absent = np.zeros(int(tf.size(strings)), bool)
    if na_values:
        absent = missing(strings, na_values).numpy()
    if field.dtype not in FLOATS and absent.any():
        index = int(np.argmax(absent))
        kind = "text" if field.dtype == "string" or field.names else field.dtype
        value = f"a missing value {shown(strings[index])} in a column of {kind}"
        only = "only a float column reads one (as NaN)"
        raise UserError(f"{where(index)}: {value}: {only}")
    if field.dtype == "string" or field.names:
        check_text(strings, where)
    if field.dtype == "string":
        return
    if field.names:
        check_labels(strings, field.names, where)
        return
    values = numbers(strings, absent, field, where)
    check_values(values, strings, absent, field, where)


def check_text(strings, where):
    """UserError at the first value that is not UTF-8 text (a vocabulary, a string input
    and a class name are text)."""
    valid = tf.strings.unicode_transcode(
        strings, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )
    bad = tf.not_equal(valid, strings).numpy()
    if bad.any():
        index = int(np.argmax(bad))
        fix = "save the file as UTF-8"
        raise UserError(
            f"{where(index)}: {shown(strings[index])} is not UTF-8 text: {fix}"
        )


def check_labels(strings, names, where):
    """UserError at the first label that is not one of the class names (as `label_ids`
    says it, naming the file's row)."""
    same = tf.equal(strings[:, None], tf.constant(names)[None, :])
    unknown = ~tf.reduce_any(same, axis=1).numpy()
    if unknown.any():
        index = int(np.argmax(unknown))
        label = f"unknown label {shown(strings[index])}"
        raise UserError(f"{where(index)}: {label} (the classes are {', '.join(names)})")


def numbers(strings, absent, field, where):
    """The column's numbers (int64, float32 or float64; a missing float is NaN); UserError
    at the first value that is not a number of the field's dtype."""
    if field.dtype in FLOATS:
        strings = tf.where(absent, "nan", strings)
        parsed = tf.float64 if field.dtype == "float64" else tf.float32
    else:
        parsed = tf.int64

    def convert(values):
        return tf.strings.to_number(values, parsed)

    try:
        return convert(strings).numpy()
    except tf.errors.InvalidArgumentError:
        count = int(tf.size(strings))
        index = first_failing(count, lambda n: fails(convert, strings[:n]))
    if not strings[index].numpy().strip():
        fix = 'list "" in `na_values` if it is a missing one'
        raise UserError(f"{where(index)}: an empty value ({fix})")
    kind = "a number" if field.dtype in FLOATS else f"a whole number ({field.dtype})"
    raise UserError(f"{where(index)}: {shown(strings[index])} is not {kind}")


def check_values(values, strings, absent, field, where):
    """UserError at the first number that its field's dtype cannot hold as it is (the rules
    of `lossless_cast`: no integer changed by the cast, finite floats, a class target's
    labels as `labels` allows them)."""
    cast = tf.cast(values, field.dtype).numpy()
    if field.dtype in FLOATS:
        bad = ~np.isfinite(cast.astype(np.float64))
        why = "is not finite"
    else:
        bad = cast.astype(values.dtype) != values
        why = f"does not fit {field.dtype}"
    if bad.any():
        index = int(np.argmax(bad))
        if absent[index]:
            fix = "inputs and targets must be finite: fill it in or drop the row"
            raise UserError(
                f"{where(index)}: a missing value {shown(strings[index])} (NaN): {fix}"
            )
        raise UserError(
            f"{where(index)}: {shown(strings[index])} {why} as {field.dtype}"
        )
    if is_labelled(field):
        outside = labels_outside(cast, field)
        if outside.any():
            index = int(np.argmax(outside))
            found = f"label {cast[index]} is outside {labels_allowed(field)}"
            raise UserError(f"{where(index)}: {found}")


def shown(value):
    """A value of the file (a string tensor) as an error shows it: quoted, escaped, and
    cut when long."""
    text = value.numpy().decode("utf-8", errors="replace")
    if len(text) > SHOWN_CHARACTERS:
        text = text[:SHOWN_CHARACTERS] + "..."
    return repr(text)
