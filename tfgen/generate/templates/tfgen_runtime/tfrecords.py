"""TFRecord files, read and parsed once before training so that a bad one is one line."""

import re

import tensorflow as tf

from .errors import UserError
from .regular_files import is_remote, require_regular


def checked_tfrecords(files, compression, parse):
    """Read and parse every record once before training, so that a corrupt, truncated or
    mis-described file is one line naming it and the record (not a traceback, nor, when
    truncated, half the data without a word); print how many examples there are."""
    total = 0
    for path in files:
        total += tfrecord_count(path, compression, parse)
    print(f"{total} examples in {len(files)} TFRecord file(s)")
    return total


def tfrecord_count(path, compression, parse):
    """The records of one file, each parsed; UserError naming the first bad one, or the
    file when it is not a regular one (a FIFO would block the run)."""
    if not is_remote(path):
        require_regular(path)
    count = 0
    size = 0
    try:
        for batch in tf.data.TFRecordDataset(path, compression).batch(256):
            first_bad_record(batch, parse, count)
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
    """Parse a batch of records; UserError naming the first that does not parse."""
    try:
        parse(batch)
    except tf.errors.InvalidArgumentError:
        for index in range(int(tf.size(batch))):
            try:
                parse(batch[index : index + 1])
            except tf.errors.InvalidArgumentError as error:
                problem = tfrecord_problem(error)
                raise UserError(f"record {first + index}: {problem}") from None
        raise


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
