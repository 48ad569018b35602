"""`--deep`'s rule for integers: a layer that cannot compute on them does not get them.

Keras casts a layer's floating inputs to its dtype, not its integer ones: uint8 images straight
into a Conv2D build (the symbolic call passes) and fail when the script runs its first step. A
layer whose input is integers is called once on zeros of that dtype; when that fails and the
same call on float32 zeros passes, the integers are why.
"""

from __future__ import annotations

from typing import Any

UNKNOWN_SIZE = 8  # a stand-in for a dimension the symbolic tensor leaves open


def integers_refused(layer: Any, x: Any) -> str | None:
    """Why `layer` cannot take the symbolic tensor `x`: it holds integers its call fails on;
    None where it can (or `x` holds no integers)."""
    dtype = str(getattr(x, "dtype", ""))
    if "int" not in dtype:
        return None
    import numpy as np

    shape = [UNKNOWN_SIZE if size is None else size for size in x.shape]
    if calls(layer, np.zeros(shape, dtype)) or not calls(layer, np.zeros(shape, "float32")):
        return None
    return (
        f"its input holds integers ({dtype}), which it cannot compute on (Keras casts only floats "
        "to a layer's dtype): put a `Rescaling` (or `Normalization`) before it, or declare the input float32"
    )


def calls(layer: Any, value: Any) -> bool:
    """Whether `layer(value)` runs."""
    try:
        layer(value)
    except Exception:
        return False
    return True
