"""The spec: pydantic models of what the user writes, one section a module."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt

from .base import Identifier, KerasObject, StrictModel
from .data import Data
from .model import Model, TargetSpec
from .training import Checkpoint, Debug, Logging, LossSpec, LossWeighting, Strategy, Train


class Spec(StrictModel):
    """A tfgen spec: one training run, from data to saved model."""

    extends: str | None = Field(None, description="path of a spec this one extends (deep merge; this one wins)")
    name: Identifier
    seed: NonNegativeInt = 0
    output_dir: str = Field("", description="default: runs/<name>")
    deterministic: bool = Field(False, description="enable TensorFlow op determinism (bit-identical reruns)")
    precision: Literal["float32", "mixed_float16", "mixed_bfloat16"] = "float32"
    strategy: Strategy = Strategy()
    data: Data
    model: Model
    targets: dict[Identifier, TargetSpec] = Field(min_length=1)
    losses: dict[Identifier, LossSpec] = Field(min_length=1)
    loss_weighting: LossWeighting = LossWeighting()
    metrics: dict[Identifier, list[KerasObject]] = {}
    optimizer: KerasObject
    train: Train
    checkpoint: Checkpoint = Checkpoint()
    logging: Logging = Logging()
    debug: Debug = Debug()


__all__ = ["Spec", "KerasObject", "LossSpec"]
