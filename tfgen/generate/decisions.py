"""Planning decisions about the generated loop: whether the step is XLA-compiled and where
the training examples live."""

from __future__ import annotations

from enum import Enum

from tfgen.spec.models import Spec
from tfgen.spec.support import JIT_STRATEGIES, in_memory_blocker, layer_types, string_inputs, xla_lookups


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
    if string_inputs(spec):
        return Jit.OFF  # XLA has no string type: a step that takes strings cannot be compiled
    train = spec.data.train
    if train.bucket_by_sequence_length or (train.padded_batch and not train.padded_batch.padded_shapes):
        return Jit.OFF  # batch shapes vary: XLA would compile the step again for each one
    convolutional = spec.model.builder is not None or any("Conv" in name for name in layer_types(spec))
    if convolutional and spec.precision != "mixed_float16":
        return Jit.GPU
    return Jit.ON if convolutional else Jit.LONG


def strings_reason(spec: Spec) -> str | None:
    """Why a step that takes strings is not XLA-compiled (for the script's comment), or None."""
    strings = string_inputs(spec)
    if not strings:
        return None
    return f"the input `{strings[0]}` holds strings, and XLA has no string type"


def resolve_in_memory(spec: Spec) -> Placement:
    """MEMORY, STREAM, or AUTO (decided at run time by the size of the arrays)."""
    setting = spec.data.train.in_memory
    if setting is False or (setting == "auto" and in_memory_blocker(spec)):
        return Placement.STREAM
    return Placement.MEMORY if setting is True else Placement.AUTO
