"""The spec: pydantic models of what the user writes, one section a module."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, NonNegativeInt

from tfgen.spec.models.base import Identifier, KerasObject, StrictModel
from tfgen.spec.models.data import Data
from tfgen.spec.models.model import Model, TargetSpec
from tfgen.spec.models.sweep import Sweep
from tfgen.spec.models.training import Checkpoint, Debug, Logging, LossSpec, LossWeighting, Strategy, Train

SEED_LIMIT = 2**32  # NumPy and TensorFlow (keras.utils.set_random_seed) take unsigned 32-bit seeds


def _run_name(value: str) -> str:
    if not value[:1].isalpha():  # an Identifier already: only a leading `_` is left to refuse
        raise ValueError(f"a run name must start with a letter, found `{value}`")
    return value


def _seed(value: int) -> int:
    if value >= SEED_LIMIT:
        raise ValueError(
            f"a seed must be below 2**32 = {SEED_LIMIT} (NumPy and TensorFlow seeds are unsigned 32-bit), found {value}"
        )
    return value


RunName = Annotated[Identifier, AfterValidator(_run_name)]
Seed = Annotated[NonNegativeInt, AfterValidator(_seed)]


class Spec(StrictModel):
    """A tfgen spec: one training run, from data to saved model."""

    extends: str | None = Field(
        None,
        description="path (relative to this spec) of a spec to start from: deep merge, this spec wins, lists are "
        "replaced whole; errors point into the file holding the node",
        examples=["base.yaml"],
    )
    name: RunName = Field(
        description="names the run and the model: an ASCII Python identifier that starts with a letter and is not "
        "a keyword",
        examples=["digits"],
        json_schema_extra={"pattern": "^[A-Za-z][A-Za-z0-9_]*$"},
    )
    seed: Seed = Field(
        0,
        description="seeds Python, NumPy, TensorFlow and Keras, the shuffles and the splits",
        examples=[42],
        json_schema_extra={"maximum": SEED_LIMIT - 1},
    )
    output_dir: str = Field(
        "",
        description="where the script writes its history, checkpoints and model (the script's `--output-dir` "
        "overrides it); empty: `runs/<name>`",
        examples=["runs/digits"],
    )
    deterministic: bool = Field(
        False,
        description="`tf.config.experimental.enable_op_determinism()`: bit-identical reruns and resumes",
        examples=[True],
    )
    precision: Literal["float32", "mixed_float16", "mixed_bfloat16"] = Field(
        "float32",
        description="`mixed_float16`: loss scaling with `keras.optimizers.LossScaleOptimizer` (the loss scale and "
        "skipped steps are logged); `mixed_bfloat16`: no loss scaling; the heads compute in float32 under both",
        examples=["mixed_float16"],
    )
    strategy: Strategy = Field(Strategy(), description="the tf.distribute strategy")
    data: Data = Field(description="where the examples come from and how they are batched")
    model: Model = Field(description="the network")
    targets: dict[Identifier, TargetSpec] = Field(
        min_length=1,
        description="`{output: target}`: what each output is trained to predict",
        examples=[{"digit": {"shape": [], "dtype": "int32", "classes": 10}}],
    )
    losses: dict[Identifier, LossSpec] = Field(
        min_length=1,
        description="`{output: Keras loss}`, one per output; `reduction` is set by tfgen",
        examples=[{"digit": {"type": "SparseCategoricalCrossentropy", "from_logits": True}}],
    )
    loss_weighting: LossWeighting = Field(LossWeighting(), description="how the outputs' losses are combined")
    metrics: dict[Identifier, list[KerasObject]] = Field(
        {},
        description="`{output: [Keras metrics]}`; history keys as `fit` names them (`<output>_<metric>` with "
        "several outputs)",
        examples=[{"digit": ["SparseCategoricalAccuracy"]}],
    )
    optimizer: KerasObject = Field(
        description="a Keras optimizer; `learning_rate` a float (Keras refuses an int: `1.0`, not `1`) or a "
        "`keras.optimizers.schedules` object",
        examples=[{"type": "Adam", "learning_rate": 0.001}],
    )
    train: Train = Field(description="how long to train, and what each step does")
    checkpoint: Checkpoint = Field(Checkpoint(), description="when to save, what to keep, whether to resume")
    logging: Logging = Field(Logging(), description="TensorBoard events and profiler traces")
    debug: Debug = Field(Debug(), description="checks that cost speed")
    sweep: Sweep | None = Field(
        None,
        description="a hyperparameter search run by `tfgen sweep` (docs/sweeps.md); the script ignores it",
        examples=[{"trials": 20, "space": {"optimizer.learning_rate": "log(1e-4,1e-2)"}}],
    )


__all__ = ["KerasObject", "LossSpec", "Spec"]
