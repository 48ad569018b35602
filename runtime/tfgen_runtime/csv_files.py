"""CSV files with a header row, read into a spec's inputs and targets (`read_csv`): into
memory, or streamed from the file by tf.data; every row is checked once before training.
"""

import csv
import os
from collections import namedtuple
from pathlib import Path

import numpy as np
import tensorflow as tf

from .class_weights import SAMPLE_WEIGHT
from .csv_rows import check_lines, examples, lines_hash, parse_lines
from .data import Field
from .errors import UserError

IN_MEMORY_BYTES = 64 * 2**20  # a larger file streams (unless `in_memory: true`)
CHECKED_LINES = 65536  # lines checked (and read) together before training
STREAMED_LINES = 4096  # lines parsed together as they stream (then one example each)
HEADER_SHOWN = 30  # header names listed when a column is missing
HEADER_BYTES = 2**20  # a longer row 1 is refused (as `validate --deep` refuses it)
CHANGED = "changed since it was checked before training: rerun to check it again"
CHECKED = {}  # a streamed file's path -> its identity when its rows were checked

# One input or target: "x" or "y", its name and Field, the header indices of its columns,
# and whether they are stacked into a vector (a list of columns).
Item = namedtuple("Item", "part name field columns stacked")
# A file as it is read: its path, delimiter, missing values, header and items.
Layout = namedtuple("Layout", "path delimiter na_values header items")


def read_csv(
    path,
    inputs,
    targets,
    *,
    x,
    y,
    delimiter=",",
    na_values=(),
    stream=None,
    rows=False,
    sample_weight=None,
    labelled=True,
):
    """The examples of a CSV file: `({input: x}, {target: y})` arrays, or a dataset
    streaming the file (`stream`: True, False, or None: when it is over 64 MiB).

    `x` and `y` map each input and target to a column or a list of columns (or give the
    only one's). Every row is checked first: a bad one is one line naming the file, the
    row (its line number) and the column. `rows`: a streamed file is returned as a
    `CsvStream`, which `held_out` splits by row. `sample_weight`: the column of each
    example's weight (finite, non-negative), read into the targets under SAMPLE_WEIGHT.
    `labelled=False`: new data to predict on, its target columns not read (nor needed).
    """
    require_file(path)
    if sample_weight is not None:
        targets, y = with_weight_column(targets, y, sample_weight)
    header = read_header(path, delimiter)
    fields = (inputs, targets if labelled else {})  # new data: no target column read
    items = layout_items(path, header, fields, (x, y if labelled else {}))
    layout = Layout(path, delimiter, tuple(na_values), tuple(header), items)
    if stream is None:
        stream = os.path.getsize(path) > IN_MEMORY_BYTES
    if not stream:
        return read_arrays(layout)
    identity = file_identity(path)  # the file as it was when its check began
    found = CsvStream(layout, *checked_rows(layout, labels=rows))
    CHECKED[path] = identity
    print(f"{found.rows} rows in {path} (streamed)")
    return found if rows else found.dataset()


def require_file(path):
    """FileNotFoundError, in one line, unless `path` is a file."""
    if Path(path).is_file():
        return
    where = f"relative paths start at {Path.cwd()}"
    fix = "pass --synthetic to train on random data instead"
    raise FileNotFoundError(f"data file {path} not found ({where}); {fix}")


def with_weight_column(targets, y, column):
    """The targets and their columns, with each example's weight (a float column) added."""
    if not isinstance(y, dict):
        y = {next(iter(targets)): y}
    weight = Field((), "float32")
    return {**targets, SAMPLE_WEIGHT: weight}, {**y, SAMPLE_WEIGHT: column}


def read_header(path, delimiter):
    """The column names of the file's first line (row 1)."""
    with open(path, "rb") as file:
        line = file.readline(HEADER_BYTES + 1)
    if len(line) > HEADER_BYTES:
        raise UserError(f"{path}: row 1 (the header) is over 1 MiB long: not a header")
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")  # a byte-order mark is no name
    except UnicodeDecodeError:
        raise UserError(f"{path}: row 1 (the header) is not UTF-8 text") from None
    if not text:
        need = "a csv source needs a header row naming its columns"
        raise UserError(f"{path}: row 1 is empty: {need}")
    if "\r" in text:  # the whole file is one line to tf.data
        ends = "its lines end in a carriage return (CR) only"
        raise UserError(f"{path}: {ends}: save it with LF (or CRLF) line endings")
    try:
        return next(csv.reader([text], delimiter=delimiter))
    except csv.Error as error:
        raise UserError(f"{path}: row 1 (the header) is not CSV: {error}") from None


def layout_items(path, header, fields, mappings):
    """The `Item` of every input and target: its columns found in the header."""
    items = []
    for part, group, mapping in zip(("x", "y"), fields, mappings):
        if not isinstance(mapping, dict):
            mapping = {next(iter(group)): mapping}
        for name, field in group.items():
            columns = mapping[name]
            stacked = isinstance(columns, list | tuple)
            names = list(columns) if stacked else [columns]
            indices = tuple(column_index(path, header, column) for column in names)
            items.append(Item(part, name, field, indices, stacked))
    return items


def column_index(path, header, column):
    """Where `column` is in the header; UserError (listing the header) when it is not there
    once."""
    found = [index for index, name in enumerate(header) if name == column]
    if len(found) == 1:
        return found[0]
    if found:
        raise UserError(
            f"{path}: row 1 (the header) names column `{column}` {len(found)} times"
        )
    shown = ", ".join(header[:HEADER_SHOWN])
    if len(header) > HEADER_SHOWN:
        shown += f", ... ({len(header)} columns)"
    raise UserError(
        f"{path}: row 1 (the header) has no column `{column}`: it has {shown}"
    )


def line_batches(path):
    """The file's lines after the header in batches, each with the row of its first."""
    lines = tf.data.TextLineDataset(path).skip(1).batch(CHECKED_LINES)
    return ((2 + number * CHECKED_LINES, batch) for number, batch in enumerate(lines))


def read_arrays(layout):
    """Every row of the file, checked, as `({input: x}, {target: y})` arrays."""
    parts = []
    for first_row, lines in line_batches(layout.path):
        fields = check_lines(lines, first_row, layout)
        parts.append(examples(fields, layout))
    if not parts:  # a header and no row: arrays of no example
        parts.append(parse_lines(tf.constant([], tf.string), layout))
    joined = ({}, {})
    for index, group in enumerate(joined):
        for name in parts[0][index]:
            group[name] = np.concatenate([part[index][name].numpy() for part in parts])
    return joined


def checked_rows(layout, labels=False):
    """Check every row; return how many there are, (`labels`) the first target's values,
    and the fingerprint of each STREAMED_LINES lines (as `CsvStream` reads them)."""
    count = 0
    values = []
    hashes = []
    for first_row, lines in line_batches(layout.path):
        fields = check_lines(lines, first_row, layout)
        count += int(tf.size(lines))
        for start in range(0, int(tf.size(lines)), STREAMED_LINES):
            hashes.append(int(lines_hash(lines[start : start + STREAMED_LINES])))
        if labels:
            targets = examples(fields, layout)[1]
            values.append(next(iter(targets.values())).numpy())
    if labels:
        values = np.concatenate(values) if values else np.zeros(0)
    return count, values if labels else None, hashes


def file_identity(path):
    """A file's size and modification time (what `changed_since_checked` compares)."""
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


def changed_since_checked():
    """The line naming a streamed CSV file changed since its rows were checked (None:
    none did): any failure while it streams is then that change's."""
    for path, identity in CHECKED.items():
        try:
            now = file_identity(path)
        except OSError:
            now = None
        if now != identity:
            return f"{path}: {CHANGED}"
    return None


class CsvStream:
    """A CSV file whose rows were checked, streamed by tf.data: every row's example, or
    the rows of one part of a split (`held_out`).

    Attributes:
        rows: how many rows (examples) the file has.
        labels: the first target's value of each row (None: not kept).
    """

    def __init__(self, layout, rows, labels=None, hashes=()):
        self.layout = layout
        self.rows = rows
        self.labels = labels
        self.hashes = list(hashes)  # of each STREAMED_LINES lines, as checked

    def dataset(self, parts=None, part=0):
        """The examples in file order: every row's, or those where `parts[row] == part`.

        Each batch of lines is the one checked (its fingerprint), or the stream stops with
        one line saying the file changed since it was checked.
        """
        layout = self.layout
        lines = tf.data.TextLineDataset(layout.path).skip(1).batch(STREAMED_LINES)
        if parts is None:
            count = self.rows
            keep = None
        else:
            keep = tf.constant(np.asarray(parts) == part)
            count = int(np.sum(np.asarray(parts) == part))

        def kept(number, batch):
            batch = self.unchanged(number, batch)
            if keep is None:
                return parse_lines(batch, layout)
            start = number * STREAMED_LINES
            chosen = keep[start : start + tf.size(batch, tf.int64)]
            return parse_lines(tf.boolean_mask(batch, chosen), layout)

        parsed = lines.enumerate().map(kept, num_parallel_calls=tf.data.AUTOTUNE)
        examples = parsed.unbatch()
        return examples.apply(tf.data.experimental.assert_cardinality(count))

    def unchanged(self, number, batch):
        """`batch`, the lines of batch `number`, once its fingerprint is the one checked."""
        hashes = tf.constant(self.hashes or [0], tf.int64)
        known = number < len(self.hashes)
        expected = tf.gather(hashes, tf.minimum(number, len(hashes) - 1))
        same = known & tf.equal(lines_hash(batch), expected)
        row = tf.strings.as_string(2 + number * STREAMED_LINES)
        where = f"{self.layout.path}: rows from "
        message = tf.strings.join([where, row, f": {CHANGED}"])
        with tf.control_dependencies([tf.debugging.Assert(same, [message])]):
            return tf.identity(batch)
