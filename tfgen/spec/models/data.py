"""`data`: where examples come from and how they are batched."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Discriminator, Field, PositiveInt, Tag, model_validator

from tfgen.sources.registry import SOURCES
from tfgen.spec.models.applications import ApplicationPreprocess
from tfgen.spec.models.base import Column, Identifier, LayerSpec, StrictModel

# The union of the registered sources' models, discriminated by `type` (tfgen/sources/registry.py).
Source = Annotated[Union[tuple(unit.model for unit in SOURCES.values())], Field(discriminator="type")]  # noqa: UP007


class ValidationPipeline(StrictModel):
    """A validation source of its own, batched like the training one."""

    source: Source = Field(
        description="where the validation examples come from: one of the sources of `data.train.source`",
        examples=[{"type": "npz", "path": "data/validation.npz", "x": "x", "y": "y"}],
    )
    batch_size: PositiveInt | None = Field(
        None, description="the global validation batch size; null: the training batch size", examples=[256]
    )
    cache: bool | str = Field(False, description="as `data.train.cache`", examples=[True])
    padded_batch: PaddedBatch | None = Field(
        None,
        description="as `data.train.padded_batch`, for validation batches; null: when training pads or buckets, "
        "each validation batch is padded with 0 to its longest example",
        examples=[{"padded_shapes": {"tokens": [64]}}],
    )


class TestPipeline(StrictModel):
    """A test source of its own: the final model is evaluated on it once, after training."""

    source: Source = Field(
        description="where the test examples come from: one of the sources of `data.train.source`",
        examples=[{"type": "csv", "path": "data/houses-test.csv", "x": ["sqft", "age"], "y": "price"}],
    )
    batch_size: PositiveInt | None = Field(
        None,
        description="the global test batch size; null: the validation batch size (itself the training one by default)",
        examples=[256],
    )


class PaddedBatch(StrictModel):
    """Batch variable-length examples by padding (to the longest in the batch unless shapes given)."""

    padded_shapes: dict[Identifier, list[PositiveInt | None]] | None = Field(
        None,
        description="`{input or target: shape}` to pad to (`null`: to the longest in the batch); "
        "null: every input and target to the longest in the batch",
        examples=[{"tokens": [64]}],
    )
    padding_values: dict[Identifier, float | int | str] | None = Field(
        None,
        description="`{input or target: value}` to pad with (a string for a string input); null: 0, or '' for strings",
        examples=[{"tokens": -1}],
    )


class BucketBySequenceLength(StrictModel):
    """Group examples of similar length (of `input`'s first axis) into per-bucket batch sizes."""

    input: Identifier | None = Field(
        None, description="the input whose length buckets; null: the only input", examples=["tokens"]
    )
    boundaries: list[PositiveInt] = Field(
        min_length=1,
        description="the lengths where one bucket ends and the next begins, increasing",
        examples=[[16, 32]],
    )
    batch_sizes: list[PositiveInt] = Field(
        min_length=2, description="each bucket's batch size: one entry more than `boundaries`", examples=[[64, 32, 16]]
    )

    @model_validator(mode="after")
    def _sizes(self) -> BucketBySequenceLength:
        if len(self.batch_sizes) != len(self.boundaries) + 1:
            raise ValueError("`batch_sizes` needs one entry more than `boundaries`")
        if sorted(set(self.boundaries)) != self.boundaries:
            raise ValueError("`boundaries` must increase")
        return self


# A preprocessing layer: a Keras layer, or an application family's `{application_preprocess: ...}`.
PreprocessLayer = Annotated[
    Annotated[ApplicationPreprocess, Tag("application_preprocess")] | Annotated[LayerSpec, Tag("keras")],
    Discriminator(
        lambda v: (
            "application_preprocess"
            if isinstance(v, ApplicationPreprocess) or (isinstance(v, dict) and "application_preprocess" in v)
            else "keras"
        )
    ),
]


class TrainPipeline(StrictModel):
    """The training source and how its examples are shuffled, batched and transformed."""

    source: Source = Field(
        description="where the training examples come from: one of the sources below",
        examples=[{"type": "synthetic", "examples": 1024}],
    )
    batch_size: PositiveInt = Field(
        description="the global batch size (the per-replica batch is derived and printed)", examples=[64]
    )
    shuffle: PositiveInt | None = Field(
        None,
        description="shuffle buffer size, reshuffled every epoch with the seed; null: no shuffling",
        examples=[2048],
    )
    cache: bool | str = Field(
        False,
        description="true: cache in memory; a string: cache to that file (made again when the data or the spec "
        "changes: `<file>.source` records what it holds)",
        examples=[True],
    )
    drop_remainder: bool = Field(
        True,
        description="drop the last partial batch of each epoch (so every step averages over the same global batch size)",
        examples=[False],
    )
    preprocess: list[PreprocessLayer] = Field(
        [],
        description="Keras preprocessing layers applied to training and validation batches (single-input models); "
        "they take the declared input and may change its shape or dtype: the model takes what they give",
        examples=[[{"type": "Rescaling", "scale": 0.0625}]],
    )
    augment: list[LayerSpec] = Field(
        [],
        description="Keras layers applied to training batches only, called with `training=True`",
        examples=[[{"type": "RandomFlip", "mode": "horizontal"}]],
    )
    padded_batch: PaddedBatch | None = Field(
        None,
        description="batch variable-length examples by padding them; null: plain batches",
        examples=[{"padding_values": {"tokens": 0}}],
    )
    bucket_by_sequence_length: BucketBySequenceLength | None = Field(
        None,
        description="batches of examples of similar length, padded per bucket; the loss averages over the real "
        "example count",
        examples=[{"input": "tokens", "boundaries": [16, 32], "batch_sizes": [64, 32, 16]}],
    )
    in_memory: Literal["auto"] | bool = Field(
        "auto",
        description="keep the training arrays on the device and slice each batch inside the compiled loop (a seeded "
        "permutation per epoch; augmentation runs in the step); auto: for array sources (`python`, `npz`, `keras`, "
        "`synthetic`, a `csv` file of at most 64 MiB) of at most 1 GiB with `drop_remainder`, no `cache` and no "
        "padding or bucketing, else the tf.data pipeline; false also streams a `csv` file from disk",
        examples=[False],
    )
    sample_weight: Column | None = Field(
        None,
        description="each training example's weight: the name of an array of the `npz` source or a column of the "
        "`csv` source (one finite, non-negative number per example); the example's loss is multiplied by it before "
        "the batch average (over the global batch size, as `fit`'s `sample_weight`); metrics and the validation "
        "loss stay unweighted; null: every example weighs 1",
        examples=["weight"],
        exclude_if=lambda value: value is None,  # a spec without it keeps its state identity
    )


class Data(StrictModel):
    """Where the training, validation and test examples come from and how they are batched."""

    train: TrainPipeline = Field(
        description="the training pipeline",
        examples=[{"source": {"type": "synthetic", "examples": 1024}, "batch_size": 64}],
    )
    validation: ValidationPipeline | None = Field(
        None,
        description="a separate validation source; not with `validation_split`",
        examples=[{"source": {"type": "keras", "dataset": "cifar10", "split": "test"}}],
    )
    validation_split: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="a seeded random fraction of the training source held out for validation (sources can be "
        "ordered); not with `validation`",
        examples=[0.2],
    )
    test: TestPipeline | None = Field(
        None,
        description="a separate test source, evaluated once after training (`Test:` line, `test.json`); "
        "not with `test_split`",
        examples=[{"source": {"type": "npz", "path": "data/test.npz", "x": "x", "y": "y"}}],
    )
    test_split: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="a seeded random fraction of the training source held out for the test (never trained, adapted "
        "or validated on); with `validation_split`, the validation rows are the ones it holds out alone",
        examples=[0.1],
    )
    stratify: bool = Field(
        False,
        description="hold out those fractions of each class of the (one) target, which needs shape `[]` and "
        "`classes`; seeded like the plain split",
        examples=[True],
    )
    shard_policy: Literal["auto", "data", "file", "off"] = Field(
        "auto",
        description="tf.data auto-shard policy across workers; auto: `file` for tfrecord sources, else `data`",
        examples=["file"],
    )

    @model_validator(mode="after")
    def _one_validation(self) -> Data:
        if self.validation is not None and self.validation_split is not None:
            raise ValueError("give `validation` or `validation_split`, not both")
        if self.stratify and self.validation_split is None and self.test_split is None:
            raise ValueError("`stratify` stratifies `validation_split` and `test_split`; there is neither")
        return self

    @model_validator(mode="after")
    def _one_test(self) -> Data:
        if self.test is not None and self.test_split is not None:
            raise ValueError("give `test` or `test_split`, not both")
        if self.test_split is not None and self.test_split + (self.validation_split or 0) >= 1:
            raise ValueError("`validation_split` and `test_split` hold out all the training examples: lower them")
        return self
