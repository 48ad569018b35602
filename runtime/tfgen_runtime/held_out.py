"""Rows held out of the training source for validation and for the test (`held_out`):
seeded, disjoint, stratified on request; from arrays, or from a CSV file that streams.
"""

import numpy as np
import tensorflow as tf

from .csv_files import CsvStream
from .data import rows_of
from .errors import UserError
from .files import FileExamples

PARTS = ("train", "validation", "test")


def held_out(data, seed, validation=None, test=None, stratify=False):
    """`[train, validation, test]`: seeded random fractions of `data` held out (a part of
    fraction None is None).

    The validation rows are the ones `split_arrays` holds out with the same seed and the
    test rows come from the other end of the same order, so a test split leaves them as
    they were. `data` is arrays `(x, y)` (the parts' rows in that order), or a
    `CsvStream` (each part streams in file order), or a folder source's files.
    """
    if isinstance(data, tf.data.Dataset):
        splits = "`validation_split` and `test_split` need arrays"
        fix = "give the held-out examples as a source of their own, or return arrays"
        raise UserError(f"{splits}, the source gave a Dataset: {fix}")
    if isinstance(data, CsvStream | FileExamples):
        labels = data.labels
    else:
        labels = next(iter(data[1].values()))
    count = data.rows if isinstance(data, CsvStream) else len(labels)
    fractions = (None, validation, test)
    order, parts = part_of_rows(count, labels if stratify else None, seed, fractions)
    found = []
    for part, fraction in enumerate(fractions):
        held = fraction is not None or part == 0
        found.append(part_of(data, order, parts, part) if held else None)
    return found


def part_of(data, order, parts, part):
    """The examples of one part: a stream's in file order, else its rows in `order`."""
    if isinstance(data, CsvStream):
        return data.dataset(parts, part)
    rows = order[parts[order] == part]
    if isinstance(data, FileExamples):
        return data.rows(rows)
    return rows_of(data, rows)


def part_of_rows(count, labels, seed, fractions):
    """The seeded order of the rows and the part of each (0 train, 1 validation, 2 test):
    of each class of `labels` (None: of all), the first rows in the order are held out for
    validation, the last ones for the test."""
    order = np.random.default_rng(seed).permutation(count)
    parts = np.zeros(count, np.int8)
    classes = np.unique(labels) if labels is not None else []
    groups = [order[labels[order] == label] for label in classes] or [order]
    _, validation, test = fractions
    for rows in groups:
        parts[rows[: round(len(rows) * (validation or 0))]] = 1
        last = round(len(rows) * (test or 0))
        parts[rows[len(rows) - last :]] = 2  # (no row when `last` is 0)
    for part, fraction in enumerate(fractions):
        if part and fraction is not None and count and not (parts == part).any():
            kept = f"{fraction} of {count} examples"
            raise UserError(f"`{PARTS[part]}_split` {kept} holds out none: raise it")
    return order, parts
