"""Decisions about the generated loop that validation and planning both need.

Kept apart from `plan` so that cross-field validation never imports the planner.
"""

from __future__ import annotations

from enum import Enum

from .spec import Spec
from .spec.data import IN_MEMORY_SOURCES
from .spec.model import Residual

# Adaptable layers and the arguments that give what `adapt` computes (validation refuses both;
# `--deep` asks for one or the other). Normalization's statistics are variables; the script keeps
# Discretization's boundaries and IntegerLookup's vocabulary in checkpointed variables of its own
# (a resume puts them back).
ADAPTABLE = {"Normalization": ("mean", "variance"), "Discretization": ("bin_boundaries",),
             "IntegerLookup": ("vocabulary",)}
INTEGER_ADAPTED = {"IntegerLookup"}  # adapted layers that compute on integers (no float32 dtype)

# Strategies under which an XLA-compiled step is known to work (on CPU: XLA under MirroredStrategy
# over logical CPU devices failed; see ../shared/notes/keras3-custom-loops.md).
JIT_STRATEGIES = ("default", "one_device")
# Layers that look values up in a hash table, which XLA cannot compile ("tf2xla conversion failed").
NO_XLA_LAYERS = ("IntegerLookup", "StringLookup", "TextVectorization")


class Jit(Enum):
    """Whether the per-replica step is XLA-compiled."""

    OFF = "off"
    ON = "on"
    GPU = "gpu"  # where a GPU is visible (decided when the script runs)
    LONG = "long"  # in runs of at least rt.COMPILE_FROM_STEPS steps (decided when the script runs)


class Placement(Enum):
    """Where the training examples live while training (the values are the names the support
    module's `StandardTrainer.use_data` takes)."""

    MEMORY = "memory"  # arrays sliced inside the compiled loop
    STREAM = "stream"  # a tf.data pipeline through a distributed iterator
    AUTO = "auto"  # decided at run time by the arrays' size


def resolve_jit(spec: Spec) -> Jit:
    """ON, OFF, GPU: compile where a GPU is visible, or LONG: in runs long enough to repay the
    compile (both decided when the script runs).

    Measured here (docs/benchmarks.md): XLA makes the MLP step ~1.5x faster on CPU but the float32
    CNN step ~30% slower, oneDNN's convolutions beating XLA's; so `auto` compiles float32
    convolutional models (and builder models, whose layers are unknown) only where a GPU is
    visible. In float16, which has no fast CPU kernels, XLA was ~2.5x faster: compiled everywhere.
    Other steps: the compile costs about a second more than tracing alone and saves 0.25 ms (MLP,
    in memory) to 0.8 ms (streamed: tf.data's threads share the CPU) a step, so a run of fewer than
    1,000 steps (digits: 660) is faster without it.
    """
    if spec.train.jit_compile != "auto":
        return Jit.ON if spec.train.jit_compile else Jit.OFF
    if spec.strategy.type not in JIT_STRATEGIES or spec.debug.check_numerics:
        return Jit.OFF
    if xla_lookups(spec):
        return Jit.OFF
    train = spec.data.train
    if train.bucket_by_sequence_length or (train.padded_batch and not train.padded_batch.padded_shapes):
        return Jit.OFF  # batch shapes vary: XLA would compile the step again for each one
    convolutional = spec.model.builder is not None or any("Conv" in name for name in layer_types(spec))
    if convolutional and spec.precision != "mixed_float16":
        return Jit.GPU
    return Jit.ON if convolutional else Jit.LONG


def model_layers(spec: Spec) -> list:
    """The model's layers in order, trunk then heads, residual blocks opened."""
    def walk(items):
        for item in items:
            if isinstance(item, Residual):
                yield from walk(item.residual)
            else:
                yield item

    heads = [layer for layers in spec.model.outputs.values() for layer in layers]
    return list(walk(list(spec.model.layers) + heads))


def layer_types(spec: Spec) -> list[str]:
    return [item.type for item in model_layers(spec)]


def xla_lookups(spec: Spec) -> list[str]:
    """The model's layer types that XLA cannot compile (hash-table lookups), sorted."""
    return sorted(set(NO_XLA_LAYERS) & set(layer_types(spec)))


def in_memory_blocker(spec: Spec) -> str | None:
    """Why the in-memory fast path cannot be used for this spec, or None."""
    train = spec.data.train
    if train.source.type not in IN_MEMORY_SOURCES:
        return f"a `{train.source.type}` source streams from files"
    if not train.drop_remainder:
        return "it needs `drop_remainder: true` (every step slices a full global batch)"
    if train.cache is not False:
        return "`cache` applies to the tf.data pipeline only"
    if train.padded_batch or train.bucket_by_sequence_length:
        return "variable-length examples are padded by the tf.data pipeline"
    return None


def resolve_in_memory(spec: Spec) -> Placement:
    """MEMORY, STREAM, or AUTO (decided at run time by the size of the arrays)."""
    setting = spec.data.train.in_memory
    if setting is False or (setting == "auto" and in_memory_blocker(spec)):
        return Placement.STREAM
    return Placement.MEMORY if setting is True else Placement.AUTO
