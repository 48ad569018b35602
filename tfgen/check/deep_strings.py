"""`--deep`'s rule for strings: they reach only the layers that take them."""

from __future__ import annotations

from typing import Any

from tfgen.spec.support import STRING_LAYERS


def strings_misused(layer_type: str, x: Any) -> str | None:
    """Why the symbolic tensor `x` cannot go into a `layer_type` layer: it holds strings and the
    layer computes on numbers (Keras's Dense, for one, takes a symbolic string tensor without a
    word); None where it can."""
    if x is None or str(getattr(x, "dtype", "")) != "string" or layer_type in STRING_LAYERS:
        return None
    return (
        f"{layer_type}: its input holds strings, which it cannot compute on: a string input reaches "
        "other layers through `TextVectorization`, `StringLookup` or `Hashing`"
    )
