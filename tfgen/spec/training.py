"""`losses`, `metrics`, `optimizer`, `train` and `checkpoint`: how the model is trained."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, NonNegativeInt, PositiveInt

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


class Checkpoint(StrictModel):
    every_epochs: PositiveInt = 1
    keep: PositiveInt = 3
