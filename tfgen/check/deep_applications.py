"""`rt.application` as `--deep` builds it: the backbone on its input's shape, with random
weights, as the script's support module builds it (tfgen_runtime/applications.py). Deep
validation downloads nothing: for `imagenet` it runs the constructor as far as Keras's download
(so that Keras's own checks of `imagenet` arguments run, and its warning about the input size
is a warning line); a weights file is loaded, as the script loads it."""

from __future__ import annotations

import contextlib
import warnings
from types import SimpleNamespace
from typing import Any
from unittest import mock

from tfgen.check.deep_custom import runtime_module


class _Downloading(Exception):
    """Raised where Keras would download the imagenet weights."""


def deep_runtime(warn: Any) -> SimpleNamespace:
    """The script's `rt`, as far as a model uses it; `warn(message)` is told of Keras's
    warnings about the imagenet weights (an input size they were not trained on)."""
    applications = runtime_module("applications")

    def application(
        constructor: Any,
        *,
        weights: str | None,
        name: str | None = None,
        trainable: bool = True,
        batchnorm: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> Any:
        """A function that builds the backbone (no top) on the shape of its input and applies it."""
        given = {**(arguments or {}), **({"name": name} if name is not None else {})}

        def apply(x: Any) -> Any:
            given["input_shape"] = tuple(x.shape[1:])
            if weights == "imagenet":
                _until_download(constructor, given, warn)
            model = constructor(include_top=False, weights=None, **given)
            if weights not in applications.PRETRAINED:
                applications.load_weights(model, weights)
            model.trainable = trainable
            if batchnorm == "inference":
                applications.keep_batchnorm_inference(model)
            apply.model = model  # what `--deep` checks of phases reads
            return model(x)

        return apply

    return SimpleNamespace(application=application)


def _until_download(constructor: Any, given: dict[str, Any], warn: Any) -> None:
    """Run the constructor with `imagenet` weights up to their download (Keras's checks of the
    arguments raise as in the script); pass on what Keras warns on the way."""
    from keras.src.utils import file_utils

    with warnings.catch_warnings(record=True) as shown, mock.patch.object(file_utils, "get_file", _refuse):
        warnings.simplefilter("always")
        with contextlib.suppress(_Downloading):
            constructor(include_top=False, weights="imagenet", **given)
    for warning in shown:
        if issubclass(warning.category, UserWarning):
            text = str(warning.message).strip().splitlines()[0]
            warn(f"the input is {_size(given['input_shape'])}; Keras warns of the imagenet weights: {text}")


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise _Downloading


def _size(shape: tuple) -> str:
    return "x".join(str(d) for d in shape)
