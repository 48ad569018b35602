"""The `tfds` source: a TensorFlow Datasets dataset, read in its stored order.

Runtime part: `runtime/tfgen_runtime/tfds_source.py` (`rt.load_tfds`).
"""

from __future__ import annotations

from tfgen.sources.tfds.model import TfdsSource
from tfgen.sources.tfds.rules import rules
from tfgen.sources.unit import Extra, Source

DOCS = """
`tfds` datasets need the `tfds` extra (`pip install "tfgen[tfds]"`; without it `validate --deep`,
`smoke` and the script say so in one line); TFDS downloads a dataset into `data_dir` on first use.
They are read in TFDS's stored order and shuffled by tfgen (seeded per epoch), so a resumed run is
exact. They stream, so `validation_split` is refused: hold out with TFDS's slicing
(`split: "train[:80%]"` for training, `"train[80%:]"` as `data.validation`). Without `x` and `y`,
the dataset's supervised pair fills the one input and the one target. `--deep` checks the name,
the split's syntax, each feature's shape and dtype, and a `ClassLabel` feature's class count
against `classes`, from TFDS's description of the dataset (nothing is downloaded).
"""

SOURCE = Source(
    model=TfdsSource,
    docs=DOCS,
    rules=rules,
    extra=Extra("tensorflow_datasets", "TensorFlow Datasets", 'pip install "tfgen[tfds]"'),
)
