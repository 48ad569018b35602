"""What tfgen's loop supports, as facts about a spec that validation and planning both need
(planning's own decisions are in tfgen.generate.decisions)."""

from __future__ import annotations

from typing import Any

from tfgen.sources import unit_of
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Residual

# Adaptable layers and the arguments that give what `adapt` computes (validation refuses both;
# `--deep` asks for one or the other). Normalization's statistics are variables; the script keeps
# Discretization's boundaries and the lookups' vocabularies in checkpointed variables of its own
# (a resume puts them back).
ADAPTABLE = {
    "Normalization": ("mean", "variance"),
    "Discretization": ("bin_boundaries",),
    "IntegerLookup": ("vocabulary",),
    "StringLookup": ("vocabulary",),
    "TextVectorization": ("vocabulary",),
}
# Adapted layers that compute on integers or strings (no float32 dtype under mixed precision).
INTEGER_ADAPTED = {"IntegerLookup", "StringLookup", "TextVectorization"}
# Adapted layers that look up a vocabulary (the same output_mode rules).
VOCABULARY_ADAPTED = ("IntegerLookup", "StringLookup", "TextVectorization")
# Their output modes whose width is the vocabulary's size (`tf_idf` is refused: see crosscheck).
WIDTH_MODES = ("one_hot", "multi_hot", "count")

# Strategies under which an XLA-compiled step is known to work (on CPU: XLA under MirroredStrategy
# over logical CPU devices failed).
JIT_STRATEGIES = ("default", "one_device")
# Layers that look values up in a hash table, which XLA cannot compile ("tf2xla conversion failed").
NO_XLA_LAYERS = ("IntegerLookup", "StringLookup", "TextVectorization")
# Layers that take strings (a string input reaches any other layer only through one of them).
STRING_LAYERS = ("StringLookup", "TextVectorization", "Hashing", "HashedCrossing", "Identity", "Reshape")


def sized_by_vocabulary(item: Any) -> bool:
    """Whether the layer `item` is an adapted lookup whose output width is the size of the
    vocabulary it learns (`one_hot`, `multi_hot`, `count`, not padded to `max_tokens`): the script
    finds that size before it builds the model, as Keras's own adapt-then-build does."""
    args = getattr(item, "args", {})
    return (
        bool(getattr(item, "adapt_batches", None))
        and item.type in VOCABULARY_ADAPTED
        and args.get("output_mode") in WIDTH_MODES
        and not args.get("pad_to_max_tokens")
    )


def string_inputs(spec: Spec) -> list[str]:
    """The model inputs that hold strings, in spec order."""
    return [name for name, item in spec.model.inputs.items() if item.dtype == "string"]


def model_layers(spec: Spec) -> list:
    """The model's layers in order, branches then trunk then heads, residual blocks opened."""

    def walk(items):
        for item in items:
            if isinstance(item, Residual):
                yield from walk(item.residual)
            else:
                yield item

    branches = [layer for layers in spec.model.branches.values() for layer in layers]
    heads = [layer for layers in spec.model.outputs.values() for layer in layers]
    return list(walk(branches + list(spec.model.layers) + heads))


ADDS_LOSSES = ("ActivityRegularization",)  # Keras layers that call add_loss


def may_add_losses(spec: Spec) -> bool:
    """Whether some layer may add a loss term (`add_loss`), which the script then logs by its
    layer's name: the user's own layers, a builder's model, an activity regularizer."""
    if spec.model is None:  # networks: the algorithm's step logs what it returns
        return False
    if spec.model.builder:
        return True
    return any(
        ":" in item.type or item.type in ADDS_LOSSES or "activity_regularizer" in item.args
        for item in model_layers(spec)
    )


def layer_types(spec: Spec) -> list[str]:
    return [item.type for item in model_layers(spec)]


def xla_lookups(spec: Spec) -> list[str]:
    """The model's layer types that XLA cannot compile (hash-table lookups), sorted."""
    return sorted(set(NO_XLA_LAYERS) & set(layer_types(spec)))


def in_memory_blocker(spec: Spec) -> str | None:
    """Why the in-memory fast path cannot be used for this spec, or None."""
    train = spec.data.train
    strings = string_inputs(spec)
    if strings:
        return f"the input `{strings[0]}` holds strings, which XLA cannot slice (they stream through tf.data)"
    if not unit_of(train.source).in_memory:
        return f"the `{train.source.type}` source streams from files"
    if not train.drop_remainder:
        return "it needs `drop_remainder: true` (every step slices a full global batch)"
    if train.cache is not False:
        return "`cache` applies to the tf.data pipeline only"
    if train.padded_batch or train.bucket_by_sequence_length:
        return "variable-length examples are padded by the tf.data pipeline"
    return None
