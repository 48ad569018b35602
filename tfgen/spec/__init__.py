"""The spec: pydantic models of what the user writes, one section a module."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, NonNegativeInt

from .base import Identifier, KerasObject, StrictModel
from .data import Data
from .model import Model, TargetSpec
from .training import Checkpoint, Debug, Logging, LossSpec, LossWeighting, Strategy, Train

SEED_LIMIT = 2**32  # NumPy and TensorFlow (keras.utils.set_random_seed) take unsigned 32-bit seeds


def _run_name(value: str) -> str:
    if not value[:1].isalpha():  # an Identifier already: only a leading `_` is left to refuse
        raise ValueError(f"a run name must start with a letter, found `{value}`")
    return value


def _seed(value: int) -> int:
    if value >= SEED_LIMIT:
        raise ValueError(f"a seed must be below 2**32 = {SEED_LIMIT} (NumPy and TensorFlow seeds are unsigned 32-bit), found {value}")
    return value


RunName = Annotated[Identifier, AfterValidator(_run_name)]
Seed = Annotated[NonNegativeInt, AfterValidator(_seed)]


class Spec(StrictModel):
    """A tfgen spec: one training run, from data to saved model."""

    extends: str | None = Field(None, description="path of a spec this one extends (deep merge; this one wins)")
    name: RunName = Field(json_schema_extra={"pattern": "^[A-Za-z][A-Za-z0-9_]*$"})
    seed: Seed = Field(0, json_schema_extra={"maximum": SEED_LIMIT - 1})
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
