"""The 8x8 digits as images, for specs/simclr.yaml (found next to the spec): random layers such
as RandomFlip and RandomTranslation take `[height, width, channels]`."""

from sklearn.datasets import load_digits


def load_digit_images():
    """`(images [n, 8, 8, 1] of 0-16, labels [n])`."""
    pixels, digits = load_digits(return_X_y=True)
    return pixels.reshape(-1, 8, 8, 1), digits
