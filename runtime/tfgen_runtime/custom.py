"""The user's own objects a spec names (`type: "module:Name"`): a class whose constructor
errors name the spec's place, a loss made per-example, and a builder's model that takes one
tensor made to take the batches' dict of inputs.
"""

import keras
import tensorflow as tf

from .errors import UserError
from .imports import function


def own_object(reference, spec_dir, place, places):
    """The user's class `reference` (found, and checked to fit `place`, as `function`
    does), made as the spec's `places` (dotted, in the order the script makes them) name
    it: a constructor that raises is a UserError naming the place, the class and the error.
    """
    return Placed(function(reference, spec_dir, place), reference, places)


class Placed:
    """A user's class, called as the class; its n-th call makes the object of the n-th
    place (again from the first when the function that makes them runs again)."""

    def __init__(self, made, reference, places):
        self.made = made
        self.reference = reference
        self.places = places
        self.calls = 0

    def __call__(self, *args, **kwargs):
        place = self.places[self.calls % len(self.places)]
        self.calls += 1
        try:
            return self.made(*args, **kwargs)
        except Exception as error:
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            why = lines[0] if lines else type(error).__name__
            raise UserError(f"{place}: {self.reference}: {why}") from error


def per_example_loss(loss, arguments=None):
    """The user's loss (a keras.losses.Loss subclass, another callable class, or a function
    `(y_true, y_pred) -> per-example loss`), given its keyword `arguments`, as a function of
    one loss per example.

    A Loss subclass is made with `reduction=None`; a function is called as Keras calls a loss
    function (both cast to the predictions' dtype). Values with more axes than the batch's are
    averaged per example, as Keras's default reduction does; the train step then averages over
    the global batch, so the loss is right across replicas.
    """
    arguments = arguments or {}
    name = f"{loss.__module__}:{loss.__qualname__}"
    if isinstance(loss, type) and issubclass(loss, keras.losses.Loss):
        return PerExample(loss(reduction=None, **arguments), name)
    if isinstance(loss, type):
        return PerExample(loss(**arguments), name)
    return PerExample(FunctionLoss(loss, arguments), name)


class FunctionLoss(keras.losses.Loss):
    """A loss function with its keyword arguments, unreduced."""

    def __init__(self, function, arguments):
        super().__init__(name=function.__name__, reduction=None)
        self.function = function
        self.arguments = arguments

    def call(self, y_true, y_pred):
        if len(y_true.shape) == len(y_pred.shape) - 1 and y_pred.shape[-1] == 1:
            # a scalar label against one output unit
            y_true = tf.expand_dims(y_true, -1)
        return self.function(y_true, y_pred, **self.arguments)


class PerExample:
    """One loss value per example: an unreduced loss, with any other axes averaged."""

    def __init__(self, loss, name):
        self.loss = loss
        self.name = name

    def __call__(self, y_true, y_pred):
        values = tf.convert_to_tensor(self.loss(y_true, y_pred))
        if values.shape.rank == 0:
            raise UserError(
                f"the loss `{self.name}` returned shape [] where per-example losses of "
                "shape [batch] were expected: return one loss per example (tfgen averages "
                "them over the global batch, across replicas)"
            )
        if values.shape.rank == 1:
            return values
        return tf.reduce_mean(tf.reshape(values, [tf.shape(values)[0], -1]), axis=1)


def keyed_inputs(model, inputs):
    """`model`, taking the batches' dict of inputs: a model of one tensor input (the
    spec has one input) is wrapped to take it by name, as Keras expects."""
    try:
        structure = model.input
    except (AttributeError, ValueError):  # a subclassed model, never called: as it is
        return model
    if not isinstance(structure, keras.KerasTensor):
        return model  # a dict (or a list) of inputs: as it is
    if len(inputs) != 1:
        raise UserError(
            f"the builder's model takes one tensor, but the spec has {len(inputs)} inputs: "
            "take a dict keyed by input name"
        )
    name, field = next(iter(inputs.items()))
    keyed = {name: keras.Input(field.shape, dtype=field.dtype, name=name)}
    return keras.Model(inputs=keyed, outputs=model(keyed[name]), name=model.name)
