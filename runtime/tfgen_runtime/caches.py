"""What a script makes once per training source and every epoch's pipeline reuses.

A script builds its training pipeline again each epoch (seeded per epoch). Made in it,
a `Dataset.cache()` would be a new, empty cache each time (the source read again every
epoch), and `from_tensor_slices` would copy the arrays again each time (`cache_files`
holds `cached`).
"""

import tensorflow as tf

KEPT = {}  # (kind, id(source)) -> (source, what was made of it)


def once_per_source(kind, source, make):
    """`make()`, called the first time for `kind` of `source`; what it made after."""
    kept = KEPT.get((kind, id(source)))
    if kept is None or kept[0] is not source:
        kept = (source, make())
        KEPT[kind, id(source)] = kept
    return kept[1]


def as_dataset(data):
    """A tf.data.Dataset of `(features, targets)` from arrays (made the first time for
    them) or a dataset."""
    if isinstance(data, tf.data.Dataset):
        return data
    return once_per_source(
        "arrays", data, lambda: tf.data.Dataset.from_tensor_slices(data)
    )
