"""`rt.application` as `--deep` builds it: the backbone on its input's shape, with random
weights (deep validation downloads nothing; the script loads `imagenet` or a file)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def application(
    constructor: Any,
    *,
    weights: str | None,
    name: str | None = None,
    trainable: bool = True,
    arguments: dict[str, Any] | None = None,
) -> Any:
    """A function that builds the backbone (no top) on the shape of its input and applies it."""
    del weights  # the architecture is the same whatever weights the script loads
    given = {**(arguments or {}), **({"name": name} if name is not None else {})}

    def apply(x: Any) -> Any:
        model = constructor(include_top=False, weights=None, input_shape=tuple(x.shape[1:]), **given)
        model.trainable = trainable
        return model(x)

    return apply


DEEP_RUNTIME = SimpleNamespace(application=application)  # the script's `rt`, as far as a model uses it
