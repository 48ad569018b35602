"""`keras.applications` backbones without their top, on the shape of the tensor they take."""

import os
import warnings
import zipfile
from pathlib import Path

import keras

from .errors import UserError

PRETRAINED = (None, "imagenet")  # what Keras's own `weights` argument takes here


def application(
    constructor, *, weights, name=None, trainable=True, batchnorm=None, arguments=None
):
    """A function that builds the backbone on its input tensor's shape and applies it.

    `weights`: "imagenet" (downloaded and cached by Keras on first use), None (random
    initial weights), or the path of a `.weights.h5` or `.keras` file of the same backbone.
    `batchnorm`: "inference" keeps its BatchNormalization layers in inference mode.
    `arguments`: the constructor's own (`alpha`, `pooling`, ...); `name`: the layer's.
    """
    given = dict(arguments or {})
    if name is not None:
        given["name"] = name

    def apply(x):
        shape = tuple(x.shape[1:])
        model = pretrained(constructor, weights, dict(given, input_shape=shape))
        if weights not in PRETRAINED:
            load_weights(model, weights)
        model.trainable = trainable
        if batchnorm == "inference":
            keep_batchnorm_inference(model)
        return model(x)

    return apply


def pretrained(constructor, weights, arguments):
    """The backbone, with Keras's `imagenet` weights when asked (UserError if they cannot
    be downloaded). Keras's warnings are shown only once it is built."""
    own = weights if weights in PRETRAINED else None
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        try:
            model = constructor(include_top=False, weights=own, **arguments)
        except Exception as error:
            # Keras's download failure is a bare Exception; any other error is not it.
            if type(error) is not Exception:
                raise
            raise UserError(download_failed(constructor.__name__, error)) from None
    for warning in shown:
        warnings.warn_explicit(
            warning.message, warning.category, warning.filename, warning.lineno
        )
    return model


def download_failed(application, error):
    """What could not be downloaded, where Keras caches weights, and the ways out."""
    home = os.environ.get("KERAS_HOME") or os.path.expanduser("~/.keras")
    models = os.path.join(home, "models")
    failed = f"the imagenet weights of {application} could not be downloaded"
    return (
        f"{failed} ({reason(error)}); Keras caches them in {models} (KERAS_HOME sets "
        "the folder): copy the file there, give `weights:` the path of a .weights.h5 "
        "or .keras file, or set `weights: null`"
    )


def keep_batchnorm_inference(layer):
    """`layer`'s BatchNormalization layers in inference mode, untrained (Keras 3:
    `trainable = False` does both), while its other weights train as `layer` does.
    Marked, so that a phase that sets `layer.trainable` again keeps them so."""
    for inner in layer._flatten_layers(include_self=True):
        if isinstance(inner, keras.layers.BatchNormalization):
            inner.trainable = False
    layer.batchnorm_inference = True


def load_weights(model, path):
    """Load a backbone's weights from a file; raise UserError naming it if they do not fit."""
    if not Path(path).is_file():
        raise UserError(f"the backbone's weights file {path} does not exist")
    try:
        model.load_weights(path)
    except ValueError as error:
        fits = f"does not fit the backbone `{model.name}`"
        raise UserError(f"{path} {fits}: {reason(error)}") from None
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise UserError(unreadable(path, error)) from None


def unreadable(path, error):
    """Why a weights file that exists could not be read, in one line."""
    if isinstance(error, zipfile.BadZipFile):
        return (
            f"{path} is not a .keras file (not a zip archive): save it with model.save"
        )
    if isinstance(error, KeyError):  # its message is its one argument, unquoted
        return (
            f"{path} holds no weights ({error.args[0] if error.args else 'KeyError'})"
        )
    return f"{path} cannot be read as a .weights.h5 file ({reason(error)})"


def reason(error):
    """The first line of an error's message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
