"""`keras.applications` backbones without their top, on the shape of the tensor they take."""

from pathlib import Path

from .errors import UserError

PRETRAINED = (None, "imagenet")  # what Keras's own `weights` argument takes here


def application(constructor, *, weights, name=None, trainable=True, arguments=None):
    """A function that builds the backbone on its input tensor's shape and applies it.

    `weights`: "imagenet" (downloaded and cached by Keras on first use), None (random
    initial weights), or the path of a `.weights.h5` or `.keras` file of the same backbone.
    `arguments`: the constructor's own (`alpha`, `pooling`, ...); `name`: the layer's.
    """
    given = dict(arguments or {})
    if name is not None:
        given["name"] = name

    def apply(x):
        own = weights if weights in PRETRAINED else None
        shape = tuple(x.shape[1:])
        model = constructor(include_top=False, weights=own, input_shape=shape, **given)
        if weights not in PRETRAINED:
            load_weights(model, weights)
        model.trainable = trainable
        return model(x)

    return apply


def load_weights(model, path):
    """Load a backbone's weights from a file; raise UserError naming it if they do not fit."""
    if not Path(path).is_file():
        raise UserError(f"the backbone's weights file {path} does not exist")
    try:
        model.load_weights(path)
    except ValueError as error:
        reason = str(error).strip().splitlines()[0]
        fits = f"does not fit the backbone `{model.name}`"
        raise UserError(f"{path} {fits}: {reason}") from None
