"""What `validate --deep` knows about Keras losses and metrics (which take class ids, one-hot rows
or 0/1 targets, which compare probabilities with a threshold), and the small helpers its messages
and `--summary` use."""

from __future__ import annotations

import math
from typing import Any

# Losses whose target holds class ids, one axis fewer than the output (the classes axis).
SPARSE = {"SparseCategoricalCrossentropy", "SparseCategoricalAccuracy", "SparseTopKCategoricalAccuracy"}


# Losses and metrics whose target has the output's shape and whose last axis is the classes.
ONE_HOT = {
    "CategoricalCrossentropy",
    "CategoricalFocalCrossentropy",
    "CategoricalGeneralizedCrossEntropy",
    "CategoricalHinge",
    "CategoricalAccuracy",
    "TopKCategoricalAccuracy",
}


BINARY = {"BinaryCrossentropy", "BinaryFocalCrossentropy"}  # 0/1 targets (one-hot rows too)


UNCHECKED_SHAPES = {"CTC", "Circle"}  # losses with shape contracts of their own


# Losses with `from_logits`: the output must be logits when it is true, probabilities when false.
PROBABILISTIC = {
    "BinaryCrossentropy",
    "BinaryFocalCrossentropy",
    "CategoricalCrossentropy",
    "CategoricalFocalCrossentropy",
    "SparseCategoricalCrossentropy",
}


# Metrics that threshold probabilities (at 0.5 by default) and the argument that moves the threshold.
THRESHOLD_ARGUMENT = {
    "BinaryAccuracy": "threshold",
    "BinaryIoU": "threshold",
    "Precision": "thresholds",
    "Recall": "thresholds",
    "TruePositives": "thresholds",
    "FalsePositives": "thresholds",
    "TrueNegatives": "thresholds",
    "FalseNegatives": "thresholds",
}


PROBABILITY_ONLY = {"PrecisionAtRecall", "RecallAtPrecision", "SensitivityAtSpecificity", "SpecificityAtSensitivity"}


def summary_table(model: Any) -> str:
    """The model's layers (name, class, output shape, parameters: all, trainable, frozen, so that
    a backbone is one row) and its parameter counts."""
    rows = [("layer", "type", "output shape", "params", "trainable", "frozen")]
    for layer in model.layers:
        try:
            shape = layer.output.shape
        except (AttributeError, ValueError):  # a layer used more than once has no single output
            shape = None
        total, trainable = layer.count_params(), sum(math.prod(v.shape) for v in layer.trainable_weights)
        counts = (f"{total:,}", f"{trainable:,}", f"{total - trainable:,}")
        rows.append((layer.name, type(layer).__name__, "?" if shape is None else _shape(shape), *counts))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = [
        "  ".join(
            [
                *(c.ljust(w) for c, w in zip(row[:3], widths, strict=False)),
                *(c.rjust(w) for c, w in zip(row[3:], widths[3:], strict=False)),
            ]
        )
        for row in rows
    ]
    trainable = sum(math.prod(v.shape) for v in model.trainable_weights)
    total = model.count_params()
    lines.append(f"{total:,} parameters ({trainable:,} trainable, {total - trainable:,} not)")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _final_activation(keras, out: Any) -> tuple[str | None, str]:
    """The activation that computes `out` ('linear' for none) and its layer's class, or None
    when the last layer has no activation to read (pooling, normalisation, ...)."""
    layer, node, _ = getattr(out, "_keras_history", (None, 0, 0))
    while isinstance(layer, keras.layers.Activation) and _activation_name(keras, layer.activation) == "linear":
        previous = layer._inbound_nodes[node].input_tensors  # past the float32 cast tfgen may add
        if len(previous) != 1:
            break
        layer, node, _ = getattr(previous[0], "_keras_history", (None, 0, 0))
    if layer is None:
        return None, ""
    if isinstance(layer, keras.layers.Softmax):
        return "softmax", type(layer).__name__
    function = getattr(layer, "activation", None)
    if function is None:
        return None, type(layer).__name__
    return _activation_name(keras, function), type(layer).__name__


def _activation_name(keras, function: Any) -> str | None:
    try:
        name = keras.activations.serialize(function)
    except Exception:
        return None
    return name if isinstance(name, str) else None


def _squeezed(output: tuple, target: tuple) -> tuple[tuple, tuple]:
    """Both shapes after Keras's squeeze of a trailing 1 when their ranks differ by one."""
    if len(output) == len(target) + 1 and output[-1] == 1:
        return output[:-1], target
    if len(target) == len(output) + 1 and target[-1] == 1:
        return output, target[:-1]
    return output, target


def _names(keys) -> str:
    return ", ".join(f"`{key}`" for key in sorted(keys))


def _same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=False))


def _shape(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
