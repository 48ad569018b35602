"""`--deep`'s rule for strings: they reach only the layers that take them."""

from __future__ import annotations

from typing import Any

from tfgen.spec.custom_objects import is_custom
from tfgen.spec.support import STRING_LAYERS


def strings_misused(layer_type: str, x: Any) -> str | None:
    """Why the symbolic tensor `x` cannot go into a `layer_type` layer: it holds strings and the
    layer computes on numbers (Keras's Dense, for one, takes a symbolic string tensor without a
    word); None where it can. The user's own layer is judged by its call, as the script's model
    is built: Keras runs its `call` on the symbolic strings, and string ops (a `standardize`
    stand-in) pass where numeric ones fail."""
    if x is None or str(getattr(x, "dtype", "")) != "string" or layer_type in STRING_LAYERS:
        return None
    if is_custom(layer_type):
        return None
    return (
        f"{layer_type}: its input holds strings, which it cannot compute on: a string input reaches "
        "other layers through `TextVectorization`, `StringLookup` or `Hashing`"
    )
