"""The small data every side-by-side comparison loads: scikit-learn's 1,797 8x8 digits as
(N, 8, 8, 1) float32 images in [0, 1] (the keras.io examples scale MNIST's 0-255 the same way)
and their int32 labels. The tfgen specs here read it as `published_data:digits`; the keras.io
programs here call it in place of `keras.datasets.mnist.load_data()`."""

from __future__ import annotations


def digits():
    """`(images, labels)`: (1797, 8, 8, 1) float32 in [0, 1], (1797,) int32."""
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    return (images / 16.0).astype("float32").reshape(-1, 8, 8, 1), labels.astype("int32")
