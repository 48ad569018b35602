"""What a script's model and its gradients must have, and the loss its regularizers add."""

import tensorflow as tf

from .errors import UserError


def regularization_loss(model):
    """The sum of the model's regularization losses (read it inside the tape)."""
    return summed_losses(model.losses)


def require_weights(model):
    """The model, unless it has nothing to train (only layers such as Dropout)."""
    if not model.trainable_variables:
        fix = "add a layer that has some, such as Dense"
        raise UserError(f"the model `{model.name}` has no trainable weights: {fix}")
    return model


def variable_path(variable):
    """A Keras variable's path (`dense/kernel`), or a tf.Variable's name (loss weighting's)."""
    return getattr(variable, "path", None) or variable.name


def require_gradients(gradients, variables):
    """Raise (once, at trace time) if the loss does not reach some trainable variable."""
    unused = [variable_path(var) for g, var in zip(gradients, variables) if g is None]
    if unused:
        allow = "train.allow_unused_variables: true allows it"
        raise ValueError(f"no gradient reaches {', '.join(unused)} ({allow})")


def summed_losses(losses):
    """The sum of a list of loss tensors (a model's regularization losses), 0.0 for none; in
    float32, as the loss is (a float16 layer's `add_loss` term is float16)."""
    if not losses:
        return tf.constant(0.0)
    return tf.add_n([tf.cast(loss, tf.float32) for loss in losses])
