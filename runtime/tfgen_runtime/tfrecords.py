"""TFRecord files, read and parsed once before training so that a bad one is one line."""

import re

import numpy as np
import tensorflow as tf

from .errors import UserError
from .labels import is_labelled, labels_allowed, labels_outside
from .regular_files import is_remote, require_regular


def checked_tfrecords(files, compression, parse, inputs=None, targets=None):
    """Read and parse every record once before training, so that a corrupt, truncated or
    mis-described file is one line naming it and the record (not a traceback, nor, when
    truncated, half the data without a word); print how many examples there are.

    `inputs` and `targets` (the declared fields): a record with a non-finite float or a
    label its target does not take (see `labels`) is one line naming the file and record.
    """
    total = 0
    fields = (inputs or {}, targets or {})
    for path in files:
        total += tfrecord_count(path, compression, parse, fields)
    print(f"{total} examples in {len(files)} TFRecord file(s)")
    return total


def tfrecord_count(path, compression, parse, fields=({}, {})):
    """The records of one file, each parsed and its values checked; UserError naming the
    first bad one, or the file when it is not a regular one (a FIFO would block the run).
    """
    if not is_remote(path):
        require_regular(path)
    count = 0
    size = 0
    try:
        for batch in tf.data.TFRecordDataset(path, compression).batch(256):
            parsed = first_bad_record(batch, parse, count)
            first_bad_value(parsed, fields, count)
            count += int(tf.size(batch))
            size += int(tf.reduce_sum(tf.strings.length(batch)))
    except tf.errors.OpError as error:
        raise UserError(f"{path}: {tfrecord_problem(error)}") from None
    except UserError as error:
        raise UserError(f"{path}: {error}") from None
    # Each record is framed by 16 bytes: a length, its CRC and the data's CRC.
    whole = size + 16 * count
    if not compression and whole != tf.io.gfile.stat(path).length:
        cut = (
            f"{count} whole records, then {tf.io.gfile.stat(path).length - whole} bytes"
        )
        raise UserError(f"{path}: truncated or damaged: {cut} of a partial record")
    return count


def first_bad_record(batch, parse, first):
    """Parse a batch of records (returned); UserError naming the first that does not parse."""
    try:
        return parse(batch)
    except tf.errors.InvalidArgumentError:
        for index in range(int(tf.size(batch))):
            try:
                parse(batch[index : index + 1])
            except tf.errors.InvalidArgumentError as error:
                problem = tfrecord_problem(error)
                raise UserError(f"record {first + index}: {problem}") from None
        raise


def first_bad_value(parsed, fields, first):
    """UserError naming the first record of a parsed batch (its first is record `first`)
    with a non-finite float, or a label outside its target's rule."""
    for part, values, declared in zip(("inputs", "targets"), parsed, fields):
        for key, field in declared.items():
            array = values[key].numpy()
            name = f"{part}.{key}"
            rows = array.reshape(len(array), -1)
            if array.dtype.kind == "f" and not np.isfinite(rows).all():
                record = first + int(np.argmin(np.isfinite(rows).all(axis=1)))
                raise UserError(
                    f"record {record}: {name}: a non-finite value (NaN or inf)"
                )
            if is_labelled(field) and labels_outside(array, field).any():
                row = int(np.argmax(labels_outside(array, field)))
                found = f"label {rows[row, 0]} is outside {labels_allowed(field)}"
                raise UserError(f"record {first + row}: {name}: {found}")


def tfrecord_problem(error):
    """TensorFlow's reason a record could not be read or parsed, in a few words."""
    text = error.message
    missing = re.search(r"Feature: (\S+) \(data type: (\w+)\) is required", text)
    if missing:
        return f"no feature `{missing[1]}` ({missing[2]}) in it"
    wrong = re.search(r"Key: (\S+), Index: \d+\.\s+(.+?)(?:\s*\[\[|\n|$)", text)
    if wrong:
        return f"feature `{wrong[1]}`: {wrong[2].strip()}"
    corrupted = re.search(r"corrupted record at (\d+)", text)
    if corrupted:
        why = "not a TFRecord file, a damaged one, or another compression"
        return f"corrupted record at byte {corrupted[1]} ({why})"
    return text.strip().splitlines()[-1]
