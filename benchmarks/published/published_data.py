"""What the programs here share. The small data every side-by-side comparison loads: scikit-learn's 1,797 8x8 digits as
(N, 8, 8, 1) float32 images in [0, 1] (the keras.io examples scale MNIST's 0-255 the same way)
and their int32 labels. The tfgen specs here read it as `published_data:digits`; the keras.io
programs here call it in place of `keras.datasets.mnist.load_data()`. And EpochMeans: each epoch's mean of the per-batch
losses a published step returns (`fit`'s history keeps only the last batch's)."""

from __future__ import annotations

import keras
import numpy as np


def digits(examples: int | None = None):
    """`(images, labels)`: (1797, 8, 8, 1) float32 in [0, 1], (1797,) int32; `examples` rows of
    them, repeated as needed, when given (the benchmark cases' sizes)."""
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    images, labels = (images / 16.0).astype("float32").reshape(-1, 8, 8, 1), labels.astype("int32")
    if examples is None:
        return images, labels
    rows = np.arange(examples) % len(labels)
    return images[rows], labels[rows]


def signed_digits(examples: int | None = None):
    """`digits()` scaled to [-1, 1], as keras.io's WGAN-GP scales Fashion-MNIST."""
    images, labels = digits(examples)
    return images * 2.0 - 1.0, labels


class EpochMeans(keras.callbacks.Callback):
    """Each epoch's mean over batches of the named per-batch logs (the published step returns each
    batch's losses; `fit`'s history keeps only the last batch's)."""

    def __init__(self, keys):
        super().__init__()
        self.keys, self.batches, self.epochs = keys, [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.batches = []

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append([float(logs[key]) for key in self.keys])

    def on_epoch_end(self, epoch, logs=None):
        columns = zip(*self.batches, strict=True)
        self.epochs.append({key: sum(c) / len(c) for key, c in zip(self.keys, columns, strict=True)})
