"""`losses`, `metrics`, `optimizer`, `train` and `checkpoint`: how the model is trained."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, NonNegativeInt, PositiveInt, model_validator

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


class Train(StrictModel):
    epochs: PositiveInt
    early_stopping: EarlyStopping | None = None
    steps_per_execution: PositiveInt | Literal["auto"] = Field(
        "auto", description="training steps run inside one tf.function call; auto: from the epoch length"
    )
    jit_compile: bool | Literal["auto"] = Field(
        "auto", description="XLA-compile the per-replica step; auto: where the strategy allows it"
    )


class Strategy(StrictModel):
    """The tf.distribute strategy; `batch_size` stays the global batch."""

    type: Literal["default", "one_device", "mirrored", "multi_worker_mirrored"] = "default"
    device: str | None = Field(None, description="one_device: the device, e.g. /gpu:0")
    devices: list[str] | None = Field(None, description="mirrored: the devices (default: all visible GPUs, else the CPU)")
    communication: Literal["auto", "ring", "nccl"] = Field("auto", description="multi_worker_mirrored: collective implementation")

    @model_validator(mode="after")
    def _fields_of_type(self) -> "Strategy":
        owners = {"device": "one_device", "devices": "mirrored"}
        for name, owner in owners.items():
            if getattr(self, name) is not None and self.type != owner:
                raise ValueError(f"`{name}` is for `type: {owner}`")
        if self.type == "one_device" and self.device is None:
            raise ValueError("`type: one_device` needs a `device`, e.g. /cpu:0 or /gpu:0")
        if self.communication != "auto" and self.type != "multi_worker_mirrored":
            raise ValueError("`communication` is for `type: multi_worker_mirrored`")
        return self


class Checkpoint(StrictModel):
    every_epochs: PositiveInt = 1
    keep: PositiveInt = 3
