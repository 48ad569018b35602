"""`losses`, `metrics`, `optimizer`, `train` and `checkpoint`: how the model is trained."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal, get_args

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from .base import KerasObject, StrictModel


class LossSpec(KerasObject):
    """A Keras loss plus its static `weight` in the total loss."""

    reserved: ClassVar[tuple[str, ...]] = ("weight",)
    reserved_schema: ClassVar[dict[str, Any]] = {"weight": {"type": "number", "default": 1.0}}

    weight: float = 1.0


class EarlyStopping(StrictModel):
    monitor: str = "val_loss"
    mode: Literal["auto", "min", "max"] = "auto"
    patience: NonNegativeInt = 0
    min_delta: float = Field(0.0, ge=0)
    baseline: float | None = None
    restore_best_weights: bool = False
    start_from_epoch: NonNegativeInt = 0


class GradientClipping(StrictModel):
    """Exactly one of `global_norm`, `norm` (per tensor) or `value`; applied to the all-reduced,
    unscaled gradients (Keras's optimizer-level clipping sees one replica's)."""

    global_norm: PositiveFloat | None = None
    norm: PositiveFloat | None = None
    value: PositiveFloat | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "GradientClipping":
        given = [name for name in ("global_norm", "norm", "value") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `global_norm`, `norm`, `value`")
        return self


class Warmup(StrictModel):
    """Linear warmup from `initial` to the optimizer's rate over `steps`, then its schedule."""

    steps: PositiveInt
    initial: NonNegativeFloat = 0.0


class ReduceOnPlateau(StrictModel):
    """As keras.callbacks.ReduceLROnPlateau; the factor lives in a checkpointed variable."""

    monitor: str = "val_loss"
    mode: Literal["auto", "min", "max"] = "auto"
    factor: float = Field(0.1, gt=0, lt=1)
    patience: NonNegativeInt = 10
    min_delta: NonNegativeFloat = 0.0001
    cooldown: NonNegativeInt = 0
    min_lr: NonNegativeFloat = 0.0


class Train(StrictModel):
    epochs: PositiveInt
    early_stopping: EarlyStopping | None = None
    gradient_clipping: GradientClipping | None = None
    gradient_accumulation_steps: PositiveInt = Field(1, description="micro-batches per update")
    warmup: Warmup | None = None
    reduce_on_plateau: ReduceOnPlateau | None = None
    validation_every: PositiveInt = Field(1, description="validate every N epochs (and after the last)")
    validation_steps: PositiveInt | None = Field(None, description="cap on validation batches")
    allow_unused_variables: bool = Field(False, description="allow trainable variables with no gradient")
    on_nonfinite: Literal["stop", "skip"] = Field(
        "stop", description="a non-finite loss: stop (keeping the last good checkpoint) or skip the update"
    )
    steps_per_execution: PositiveInt | Literal["auto"] = Field(
        "auto", description="training steps run inside one tf.function call; auto: from the epoch length"
    )
    jit_compile: bool | Literal["auto"] = Field(
        "auto", description="XLA-compile the per-replica step; auto: where the strategy allows it"
    )


StrategyType = Literal["default", "one_device", "mirrored", "multi_worker_mirrored"]  # the strategies tfgen writes


class Strategy(StrictModel):
    """The tf.distribute strategy; `batch_size` stays the global batch."""

    type: StrategyType = "default"
    device: str | None = Field(None, description="one_device: the device, e.g. /gpu:0")
    devices: list[str] | None = Field(None, description="mirrored: the devices (default: all visible GPUs, else the CPU)")
    cpu_replicas: PositiveInt | None = Field(
        None,
        description="mirrored: mirror over this many logical CPU devices (the script's --cpu-replicas): "
        "a way to test multi-replica code without GPUs, not a speed-up",
    )
    communication: Literal["auto", "ring", "nccl"] = Field("auto", description="multi_worker_mirrored: collective implementation")
    timeout_seconds: PositiveFloat | None = Field(
        600.0, description="multi_worker_mirrored: a collective waiting longer for a peer fails the worker (null: wait forever)"
    )

    SUPPORTED: ClassVar[tuple[str, ...]] = get_args(StrategyType)
    # tf.distribute strategies tfgen writes no loop for, and why.
    UNSUPPORTED: ClassVar[dict[str, str]] = {
        "parameterserver": "ParameterServerStrategy: asynchronous training needs a ClusterCoordinator loop",
        "centralstorage": "CentralStorageStrategy: deprecated in TensorFlow",
        "tpu": "TPUStrategy: tfgen's loops are not run on TPUs by its tests",
    }

    @field_validator("type", mode="before")
    @classmethod
    def _supported(cls, value: Any) -> Any:
        """A strategy tfgen does not write is named as such, with the ones it does."""
        if not isinstance(value, str) or value in cls.SUPPORTED:
            return value
        key = re.sub(r"[^a-z]", "", value.lower()).removesuffix("strategy")
        supported = ", ".join(cls.SUPPORTED)
        if key in cls.UNSUPPORTED:
            raise ValueError(f"`{value}` is not supported ({cls.UNSUPPORTED[key]}); supported strategies: {supported}")
        spelled = [name for name in cls.SUPPORTED if name.replace("_", "") == key]
        if spelled:
            raise ValueError(f"`{value}` is written `{spelled[0]}` here; supported strategies: {supported}")
        return value

    @model_validator(mode="after")
    def _fields_of_type(self) -> "Strategy":
        owners = {"device": "one_device", "devices": "mirrored", "cpu_replicas": "mirrored"}
        for name, owner in owners.items():
            if getattr(self, name) is not None and self.type != owner:
                raise ValueError(f"`{name}` is for `type: {owner}`")
        if self.cpu_replicas is not None and self.devices is not None:
            raise ValueError("give `devices` or `cpu_replicas`, not both (cpu_replicas mirrors over /cpu:0 .. /cpu:N-1)")
        if self.type == "one_device" and self.device is None:
            raise ValueError("`type: one_device` needs a `device`, e.g. /cpu:0 or /gpu:0")
        if self.communication != "auto" and self.type != "multi_worker_mirrored":
            raise ValueError("`communication` is for `type: multi_worker_mirrored`")
        if "timeout_seconds" in self.model_fields_set and self.type != "multi_worker_mirrored":
            raise ValueError("`timeout_seconds` is for `type: multi_worker_mirrored`")
        return self


class KeepBest(StrictModel):
    monitor: str = "val_loss"
    mode: Literal["auto", "min", "max"] = "auto"


class Checkpoint(StrictModel):
    """When to save, what to keep, whether to resume, and what to export at the end."""

    every_epochs: PositiveInt | None = Field(None, description="save every N epochs (the default: 1)")
    every_steps: PositiveInt | None = Field(None, description="save every N steps, mid-epoch included")
    keep: PositiveInt = 3
    keep_best: KeepBest | None = Field(None, description="also keep the best epoch's weights in checkpoints/best/")
    resume: Literal["auto", "never"] = "auto"
    export: list[Literal["keras", "saved_model"]] = Field(["keras"], description="formats of the final model")

    @model_validator(mode="after")
    def _one_cadence(self) -> "Checkpoint":
        if self.every_epochs is not None and self.every_steps is not None:
            raise ValueError("give `every_epochs` or `every_steps`, not both")
        return self


class Profile(StrictModel):
    start_step: PositiveInt
    steps: PositiveInt


class Logging(StrictModel):
    tensorboard: bool = Field(False, description="write TensorBoard events under <output_dir>/tensorboard/")
    every_steps: PositiveInt = Field(100, description="TensorBoard step summaries every N steps")
    profile: Profile | None = Field(None, description="capture a tf.profiler trace of this window of steps")


class LossWeighting(StrictModel):
    """How the outputs' losses are combined (each `losses.<output>.weight` scales its task)."""

    type: Literal["static", "uncertainty", "ema_ratio"] = "static"
    decay: float = Field(0.9, gt=0, lt=1, description="ema_ratio: the moving average's decay")

    @model_validator(mode="after")
    def _decay_for_ema(self) -> "LossWeighting":
        if self.type != "ema_ratio" and "decay" in self.model_fields_set:
            raise ValueError("`decay` is for `type: ema_ratio`")
        return self


class Debug(StrictModel):
    check_numerics: bool = Field(False, description="tf.debugging.check_numerics on losses and gradients")
