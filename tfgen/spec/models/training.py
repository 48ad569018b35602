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
    model_serializer,
    model_validator,
)

from tfgen.spec.models.base import KerasObject, StrictModel
from tfgen.spec.models.phases import Phase

CLASS_WEIGHT = (
    "a tfgen key, not a Keras argument: each training example's loss is multiplied by its class's weight before "
    "the batch average (which divides by the global batch size, as `fit`'s `class_weight` does); "
    "`{class id or name: weight}` (a class not listed weighs 1), or `balanced`: n_examples / (n_classes * "
    "count of the class) over the training labels (scikit-learn's rule), counted once and recorded in run.json; "
    "the validation loss and the metrics stay unweighted; null: every class weighs 1"
)


class LossSpec(KerasObject):
    """A Keras loss plus its static `weight` in the total loss, and its `class_weight`."""

    reserved: ClassVar[tuple[str, ...]] = ("weight", "class_weight")
    reserved_schema: ClassVar[dict[str, Any]] = {
        "weight": {
            "type": "number",
            "default": 1.0,
            "description": "the loss's weight in the total (a tfgen key, not a Keras argument; it scales the task "
            "under every `loss_weighting`)",
            "examples": [0.5],
        },
        "class_weight": {
            "anyOf": [
                {"const": "balanced", "type": "string"},
                {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}},
                {"type": "null"},
            ],
            "default": None,
            "description": CLASS_WEIGHT,
            "examples": [{"0": 1.0, "1": 5.0}, "balanced"],
        },
    }

    weight: float = 1.0
    # Left out of the dump when null, so that a spec without it keeps its state identity.
    class_weight: dict[int | str, NonNegativeFloat] | Literal["balanced"] | None = Field(
        None, exclude_if=lambda value: value is None
    )

    @field_validator("class_weight", mode="before")
    @classmethod
    def _class_weight(cls, value: Any) -> Any:
        """One error for a bad value (not one per kind of value it could have been)."""
        if value is None or value == "balanced":
            return value
        if not isinstance(value, dict):
            raise ValueError(f"expected `balanced` or a mapping `{{class: weight}}`, found {value!r}")  # noqa: TRY004
        if len({type(key) for key in value}) > 1:
            raise ValueError("key the class weights by class ids or by class names, not both")
        for key, weight in value.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
                raise ValueError(f"the weight of class {key} must be a number of 0 or more, found {weight!r}")
        return value


MONITOR = "a value the history logs (checked at build time)"
MODE = "`min`, `max`, or `auto` (max for accuracy-like names)"


class EarlyStopping(StrictModel):
    """Stop when a monitored value stops improving, as keras.callbacks.EarlyStopping."""

    monitor: str = Field("val_loss", description=MONITOR, examples=["val_sparse_categorical_accuracy"])
    mode: Literal["auto", "min", "max"] = Field("auto", description=MODE, examples=["max"])
    patience: NonNegativeInt = Field(0, description="epochs without improvement before stopping", examples=[5])
    min_delta: float = Field(0.0, ge=0, description="smallest change that counts as an improvement", examples=[0.001])
    baseline: float | None = Field(
        None, description="only values past it reset the patience count (as Keras)", examples=[0.5]
    )
    restore_best_weights: bool = Field(
        False,
        description="the saved model gets the best epoch's weights (also when the run ends without stopping)",
        examples=[True],
    )
    start_from_epoch: NonNegativeInt = Field(0, description="epochs to train before monitoring starts", examples=[3])


class GradientClipping(StrictModel):
    """Exactly one of `global_norm`, `norm` (per tensor) or `value`; applied to the all-reduced,
    unscaled gradients (Keras's optimizer-level clipping sees one replica's)."""

    global_norm: PositiveFloat | None = Field(
        None, description="scale all gradients so that their global norm is at most this", examples=[1.0]
    )
    norm: PositiveFloat | None = Field(None, description="clip each gradient tensor to this norm", examples=[1.0])
    value: PositiveFloat | None = Field(None, description="clip each gradient value to [-value, value]", examples=[0.5])

    @model_validator(mode="after")
    def _exactly_one(self) -> GradientClipping:
        given = [name for name in ("global_norm", "norm", "value") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `global_norm`, `norm`, `value`")
        return self


class Warmup(StrictModel):
    """Linear warmup from `initial` to the optimizer's rate over `steps`, then its schedule."""

    steps: PositiveInt = Field(description="the warmup's length in steps", examples=[500])
    initial: NonNegativeFloat = Field(0.0, description="the rate at the first step", examples=[0.0001])


class ReduceOnPlateau(StrictModel):
    """As keras.callbacks.ReduceLROnPlateau; the factor lives in a checkpointed variable."""

    monitor: str = Field("val_loss", description=MONITOR, examples=["loss"])
    mode: Literal["auto", "min", "max"] = Field("auto", description=MODE, examples=["min"])
    factor: float = Field(
        0.1, gt=0, lt=1, description="the rate is multiplied by it each time the value stops improving", examples=[0.5]
    )
    patience: NonNegativeInt = Field(
        10, description="epochs without improvement before the rate is lowered", examples=[3]
    )
    min_delta: NonNegativeFloat = Field(
        0.0001, description="smallest change that counts as an improvement", examples=[0.001]
    )
    cooldown: NonNegativeInt = Field(
        0, description="epochs after a reduction before epochs are counted again", examples=[2]
    )
    min_lr: NonNegativeFloat = Field(0.0, description="the lowered rate never goes below it", examples=[1e-06])


class SharpnessAware(StrictModel):
    """Sharpness-aware minimisation (SAM, Foret et al. 2021): each step's gradient is taken at the
    weights within `rho` of the current ones that raise the loss most, and applied at the current ones."""

    rho: PositiveFloat = Field(
        0.05, description="the radius of the ascent (the L2 norm of the step to the worst weights)", examples=[0.05]
    )


class Train(StrictModel):
    """How long to train, and what each step does to the gradients and the rate."""

    epochs: PositiveInt = Field(description="epochs to train (the script's `--epochs` overrides it)", examples=[30])
    early_stopping: EarlyStopping | None = Field(
        None,
        description="stop when a monitored value stops improving; null: train every epoch",
        examples=[{"monitor": "val_loss", "patience": 5, "restore_best_weights": True}],
    )
    gradient_clipping: GradientClipping | None = Field(
        None,
        description="exactly one of `global_norm`, `norm` (per tensor) or `value`, applied to the all-reduced "
        "gradients (the true global norm across replicas) and, with float16 loss scaling, to unscaled gradients; "
        "optimizer-level `clipnorm`/`global_clipnorm`/`clipvalue` clip per replica and are refused under a "
        "multi-replica strategy",
        examples=[{"global_norm": 1.0}],
    )
    gradient_accumulation_steps: PositiveInt = Field(
        1,
        description="k micro-batches of `batch_size` per update (equal to one k-times-larger batch)",
        examples=[4],
    )
    sharpness_aware: SharpnessAware | None = Field(
        None,
        description="SAM: two forward and backward passes per step, the second at the worst weights within `rho` "
        "along the global batch's gradient (one all-reduce more across replicas); not with "
        "`gradient_accumulation_steps`",
        examples=[{"rho": 0.05}],
    )
    warmup: Warmup | None = Field(
        None,
        description="linear warmup to the optimizer's `learning_rate` (a number or a schedule), then that rate",
        examples=[{"steps": 500}],
    )
    reduce_on_plateau: ReduceOnPlateau | None = Field(
        None,
        description="lower the rate when a monitored value stops improving, as keras.callbacks.ReduceLROnPlateau; "
        "the factor is a checkpointed variable scaling the rate",
        examples=[{"factor": 0.5, "patience": 3}],
    )
    validation_every: PositiveInt = Field(1, description="validate every N epochs (and after the last)", examples=[5])
    validation_steps: PositiveInt | None = Field(
        None, description="cap on validation batches; null: all of them", examples=[50]
    )
    allow_unused_variables: bool = Field(
        False,
        description="false: at the first trace, an error names every trainable variable whose gradient is None",
        examples=[True],
    )
    on_nonfinite: Literal["stop", "skip"] = Field(
        "stop",
        description="a non-finite loss on any replica: `stop` ends the run naming the step and the losses, without "
        "applying the update or saving (weights that became non-finite while the loss stayed finite, as off XLA "
        "where `relu(NaN)` is 0, end it after the running steps, naming them); `skip` skips the update everywhere "
        "and counts it in `skipped_steps`",
        examples=["skip"],
    )
    steps_per_execution: PositiveInt | Literal["auto"] = Field(
        "auto",
        description="training steps per tf.function call (a `tf.range` loop, like Keras's `steps_per_execution`); "
        "auto: 100 at first, doubled while a call takes under 0.25 s, at most an epoch, ending on checkpoint and "
        "summary steps; a cluster's workers keep 100",
        examples=[50],
    )
    jit_compile: bool | Literal["auto"] = Field(
        "auto",
        description="XLA-compile the per-replica step (`true` is refused under `mirrored` and "
        "`multi_worker_mirrored`, with `check_numerics` and with hash-table lookup layers); auto: see below",
        examples=[False],
    )
    phases: list[Phase] = Field(
        [],
        description="consecutive runs of epochs covering `epochs` exactly, each with its `frozen` layers and "
        "`learning_rate_factor`; each phase traces its own step once; empty: one phase, nothing frozen",
        examples=[[{"epochs": 2, "frozen": ["backbone"]}, {"epochs": 8, "learning_rate_factor": 0.1}]],
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The fields, less `phases` when there are none and `sharpness_aware` when off: a run
        without them dumps (and so hashes into its STATE_SHA256) as it did before them."""
        data = handler(self)
        if not self.phases:
            data.pop("phases", None)
        if self.sharpness_aware is None:
            data.pop("sharpness_aware", None)
        return data


StrategyType = Literal["default", "one_device", "mirrored", "multi_worker_mirrored"]  # the strategies tfgen writes


class Strategy(StrictModel):
    """The tf.distribute strategy; `batch_size` stays the global batch."""

    type: StrategyType = Field(
        "default", description="the tf.distribute strategy the script trains under", examples=["mirrored"]
    )
    device: str | None = Field(None, description="one_device: the device", examples=["/gpu:0"])
    devices: list[str] | None = Field(
        None,
        description="mirrored: the devices, each checked at start (a missing one is one line naming the devices "
        "there are, never a hang); null: all visible GPUs, else the CPU",
        examples=[["/gpu:0", "/gpu:1"]],
    )
    cpu_replicas: PositiveInt | None = Field(
        None,
        description="mirrored: mirror over this many logical CPU devices, `/cpu:0` .. `/cpu:N-1` (the script's "
        "`--cpu-replicas N` sets it too): a way to test multi-replica code without GPUs, not a speed-up",
        examples=[2],
    )
    communication: Literal["auto", "ring", "nccl"] = Field(
        "auto",
        description="multi_worker_mirrored: the collective implementation; the cluster comes from `TF_CONFIG`",
        examples=["ring"],
    )
    timeout_seconds: PositiveFloat | None = Field(
        600.0,
        description="multi_worker_mirrored: a collective that waits longer for a peer fails the worker (one line, "
        "exit 1), so it can be restarted; null: wait forever",
        examples=[120.0],
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
    def _fields_of_type(self) -> Strategy:
        owners = {"device": "one_device", "devices": "mirrored", "cpu_replicas": "mirrored"}
        for name, owner in owners.items():
            if getattr(self, name) is not None and self.type != owner:
                raise ValueError(f"`{name}` is for `type: {owner}`")
        if self.cpu_replicas is not None and self.devices is not None:
            raise ValueError(
                "give `devices` or `cpu_replicas`, not both (cpu_replicas mirrors over /cpu:0 .. /cpu:N-1)"
            )
        if self.type == "one_device" and self.device is None:
            raise ValueError("`type: one_device` needs a `device`, e.g. /cpu:0 or /gpu:0")
        if self.communication != "auto" and self.type != "multi_worker_mirrored":
            raise ValueError("`communication` is for `type: multi_worker_mirrored`")
        if "timeout_seconds" in self.model_fields_set and self.type != "multi_worker_mirrored":
            raise ValueError("`timeout_seconds` is for `type: multi_worker_mirrored`")
        return self


class KeepBest(StrictModel):
    """Keep the weights of the best epoch by a monitored value."""

    monitor: str = Field(
        "val_loss",
        description="a value the history logs (not checked at build time: a name the history never logs keeps no "
        "best weights)",
        examples=["val_sparse_categorical_accuracy"],
    )
    mode: Literal["auto", "min", "max"] = Field("auto", description=MODE, examples=["max"])


class Checkpoint(StrictModel):
    """When to save, what to keep, whether to resume, and what to export at the end."""

    every_epochs: PositiveInt | None = Field(
        None,
        description="save every N epochs (and at the last epoch or an early stop); null: 1, unless `every_steps`",
        examples=[5],
    )
    every_steps: PositiveInt | None = Field(
        None,
        description="save every N steps instead, mid-epoch included (chunks of `steps_per_execution` end on these "
        "steps)",
        examples=[1000],
    )
    keep: PositiveInt = Field(3, description="checkpoints to keep", examples=[5])
    keep_best: KeepBest | None = Field(
        None,
        description="also keep the best epoch's weights in `checkpoints/best/`, with `best.json` (`monitor`, "
        "`value`, `epoch`)",
        examples=[{"monitor": "val_loss"}],
    )
    resume: Literal["auto", "never"] = Field(
        "auto",
        description="`auto`: resume from the newest readable checkpoint; `never`: always start over",
        examples=["never"],
    )
    export: list[Literal["keras", "saved_model", "tflite"]] = Field(
        ["keras"],
        description="formats of the final model: `keras` (`model.keras`), `saved_model` (`model.export`, "
        "`saved_model/`), `tflite` (`model.tflite`, float32, and `model.quantized.tflite`, its weights "
        "dynamic-range quantized; not for string inputs)",
        examples=[["keras", "saved_model"]],
    )

    @model_validator(mode="after")
    def _one_cadence(self) -> Checkpoint:
        if self.every_epochs is not None and self.every_steps is not None:
            raise ValueError("give `every_epochs` or `every_steps`, not both")
        return self


class Profile(StrictModel):
    """A window of training steps to trace with tf.profiler."""

    start_step: PositiveInt = Field(description="the window's first step (1-based)", examples=[10])
    steps: PositiveInt = Field(description="how many steps the window holds", examples=[5])


class Logging(StrictModel):
    """TensorBoard events, profiler traces, and the run's report."""

    tensorboard: bool = Field(
        False,
        description="TensorBoard events under `<output_dir>/tensorboard/{train,validation}`: `step/*` every "
        "`every_steps` steps (running losses and metrics, `lr`, `gradient_norm`, `loss_scale`, "
        "`examples_per_second`) and `epoch/*` per epoch",
        examples=[True],
    )
    every_steps: PositiveInt = Field(100, description="TensorBoard step summaries every N steps", examples=[50])
    profile: Profile | None = Field(
        None,
        description="a tf.profiler trace of this window of steps under `tensorboard/profile/`",
        examples=[{"start_step": 10, "steps": 5}],
    )
    report: bool = Field(
        True,
        description="at the end of a run, `<output_dir>/report.html` and its PNGs (matplotlib): each logged figure "
        "per epoch, the learning rate, the phases' starts and each class target's confusion matrix (the "
        "`confusion.json` every run writes, on the test data, else the validation data); `tfgen report` draws it "
        "for any run folders",
        examples=[False],
    )


class LossWeighting(StrictModel):
    """How the outputs' losses are combined (each `losses.<output>.weight` scales its task)."""

    type: Literal["static", "uncertainty", "ema_ratio"] = Field(
        "static",
        description="`static`: each loss's `weight`; `uncertainty`: one trainable log-variance per task (Kendall, "
        "Gal and Cipolla, 2018), trained with the model and checkpointed; `ema_ratio`: each task's weight follows an "
        "exponential moving average of its loss, normalised to sum to the number of tasks, in non-trainable "
        "variables updated inside the compiled step",
        examples=["uncertainty"],
    )
    decay: float = Field(0.9, gt=0, lt=1, description="ema_ratio: the moving average's decay", examples=[0.99])

    @model_validator(mode="after")
    def _decay_for_ema(self) -> LossWeighting:
        if self.type != "ema_ratio" and "decay" in self.model_fields_set:
            raise ValueError("`decay` is for `type: ema_ratio`")
        return self


class Debug(StrictModel):
    """Checks that cost speed."""

    check_numerics: bool = Field(
        False,
        description="tf.debugging.check_numerics on the loss and every gradient (turns `jit_compile: auto` off)",
        examples=[True],
    )
