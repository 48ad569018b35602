"""Small data sets for the example specs (imported by generated scripts, never by `tfgen build`)."""

from __future__ import annotations


def token_sequences(examples: int = 1024, max_length: int = 24, vocabulary: int = 32, seed: int = 0):
    """Variable-length token sequences and a label: do high token ids outnumber low ones?

    Returns a tf.data.Dataset of `(tokens, label)`: int32 ids in 1..vocabulary-1 (0 is left for
    padding) of length 2..max_length, and an int32 label in {0, 1}.
    """
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, max_length + 1, size=examples)
    sequences = [rng.integers(1, vocabulary, size=length).astype("int32") for length in lengths]
    labels = np.array([int((s >= vocabulary // 2).sum() > len(s) / 2) for s in sequences], dtype="int32")
    return tf.data.Dataset.from_generator(
        lambda: zip(sequences, labels, strict=False),
        output_signature=(tf.TensorSpec([None], tf.int32), tf.TensorSpec([], tf.int32)),
    )
