"""The spec: pydantic models of what the user writes, one section a module."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, NonNegativeInt, model_serializer

from tfgen.spec.models.algorithms import Algorithm, Supervised
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


# What each algorithm requires, for editors (the JSON Schema); tfgen's own errors come from
# tfgen/spec/algorithm_rules.py.
ALGORITHM_REQUIRES = {
    "if": {"required": ["algorithm"], "properties": {"algorithm": {"properties": {"type": {"const": "gan"}}}}},
    "then": {"required": ["networks", "optimizers"]},
    "else": {"required": ["model", "losses", "optimizer"]},
}


class Spec(StrictModel):
    """A tfgen spec: one training run, from data to saved model."""

    model_config = ConfigDict(**StrictModel.model_config, json_schema_extra=ALGORITHM_REQUIRES)

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
        description="`tf.config.experimental.enable_op_determinism()` and grappler's arithmetic optimizer off: "
        "bit-identical reruns and resumes",
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
    algorithm: Algorithm = Field(
        Supervised(),
        description="what a training step does: `supervised` (the default: `model`, `optimizer`, a loss per "
        "output), `distillation` (the model learns from a frozen teacher too), `gan` or `custom` (your own "
        "step; both `networks` and `optimizers`); see docs/algorithms.md",
        examples=[{"type": "gan", "loss": "non_saturating"}],
    )
    model: Model | None = Field(
        None,
        description="the network (required by the `supervised` algorithm)",
        examples=[{"inputs": {"pixels": {"shape": [64]}}, "outputs": {"digit": [{"type": "Dense", "units": 10}]}}],
    )
    networks: dict[Identifier, Model] | None = Field(
        None,
        description="`{name: network}`, each written like `model`, instead of `model` when the algorithm trains "
        "several (`gan`: `generator` and `discriminator`)",
        examples=[{"generator": {"inputs": {"noise": {"shape": [32]}}, "outputs": {"pixels": ["Dense"]}}}],
    )
    targets: dict[Identifier, TargetSpec] = Field(
        min_length=1,
        description="`{output: target}`: what each output is trained to predict",
        examples=[{"digit": {"shape": [], "dtype": "int32", "classes": 10}}],
    )
    losses: dict[Identifier, LossSpec] = Field(
        {},
        description="`{output: Keras loss}`, one per output (required by `supervised`); `reduction` is set by tfgen",
        examples=[{"digit": {"type": "SparseCategoricalCrossentropy", "from_logits": True}}],
    )
    loss_weighting: LossWeighting = Field(LossWeighting(), description="how the outputs' losses are combined")
    metrics: dict[Identifier, list[KerasObject]] = Field(
        {},
        description="`{output: [Keras metrics]}`; history keys as `fit` names them (`<output>_<metric>` with "
        "several outputs)",
        examples=[{"digit": ["SparseCategoricalAccuracy"]}],
    )
    optimizer: KerasObject | None = Field(
        None,
        description="a Keras optimizer (required by `supervised`); `learning_rate` a float (Keras refuses an int: "
        "`1.0`, not `1`) or a `keras.optimizers.schedules` object",
        examples=[{"type": "Adam", "learning_rate": 0.001}],
    )
    optimizers: dict[Identifier, KerasObject] | None = Field(
        None,
        description="`{network: Keras optimizer}`, one per trained network of `networks`, instead of `optimizer`",
        examples=[{"generator": {"type": "Adam", "learning_rate": 0.0002, "beta_1": 0.5}}],
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

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The fields, less the algorithm's where they are unset: a supervised spec dumps (and so
        hashes into a run's STATE_SHA256) as it did before algorithms."""
        data = handler(self)
        for field in ("networks", "optimizers", "model", "optimizer"):
            if getattr(self, field) is None:
                data.pop(field, None)
        if self.algorithm == Supervised():
            data.pop("algorithm", None)
        return data


__all__ = ["KerasObject", "LossSpec", "Spec"]
