"""`data`: where examples come from and how they are batched."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, PositiveInt, model_validator

from .base import DottedRef, Identifier, LayerSpec, Shape, StrictModel


class PythonSource(StrictModel):
    """A function returning `(x, y)` arrays (or dicts of arrays keyed by input/target name), or a
    tf.data.Dataset of `(features, targets)`."""

    type: Literal["python"]
    function: DottedRef
    kwargs: dict[str, Any] = {}


class NpzSource(StrictModel):
    """A NumPy .npz file; `x` and `y` name its arrays (one name, or a mapping per input/target)."""

    type: Literal["npz"]
    path: str = Field(min_length=1)
    x: str | dict[Identifier, str]
    y: str | dict[Identifier, str]


class TFRecordFeature(StrictModel):
    shape: Shape = []
    dtype: Literal["float32", "int64", "string"] = "float32"


class TFRecordSource(StrictModel):
    """tf.train.Example records; `features` is the feature description, keyed like the inputs
    and targets they fill (other features are parsed and dropped)."""

    type: Literal["tfrecord"]
    files: str = Field(min_length=1, description="a file or glob pattern")
    features: dict[str, TFRecordFeature]
    compression: Literal["GZIP", "ZLIB"] | None = None


class KerasSource(StrictModel):
    """A `keras.datasets` dataset, downloaded and cached by Keras on first use."""

    type: Literal["keras"]
    dataset: Literal["mnist", "fashion_mnist", "cifar10", "cifar100", "boston_housing", "california_housing"]
    split: Literal["train", "test"] = "train"


class SyntheticSource(StrictModel):
    """Random data of the declared input and target shapes."""

    type: Literal["synthetic"]
    examples: PositiveInt


Source = Annotated[
    Union[PythonSource, NpzSource, TFRecordSource, KerasSource, SyntheticSource], Field(discriminator="type")
]

# Sources that give arrays (a python function may also return a tf.data.Dataset).
IN_MEMORY_SOURCES = ("python", "npz", "keras", "synthetic")


class ValidationPipeline(StrictModel):
    source: Source
    batch_size: PositiveInt | None = Field(None, description="default: the training batch size")
    cache: bool | str = False
    padded_batch: PaddedBatch | None = None


class PaddedBatch(StrictModel):
    """Batch variable-length examples by padding (to the longest in the batch unless shapes given)."""

    padded_shapes: dict[Identifier, list[PositiveInt | None]] | None = None
    padding_values: dict[Identifier, float | int] | None = None


class BucketBySequenceLength(StrictModel):
    """Group examples of similar length (of `input`'s first axis) into per-bucket batch sizes."""

    input: Identifier | None = Field(None, description="the input whose length buckets (default: the only one)")
    boundaries: list[PositiveInt] = Field(min_length=1)
    batch_sizes: list[PositiveInt] = Field(min_length=2, description="one more than boundaries")

    @model_validator(mode="after")
    def _sizes(self) -> "BucketBySequenceLength":
        if len(self.batch_sizes) != len(self.boundaries) + 1:
            raise ValueError("`batch_sizes` needs one entry more than `boundaries`")
        if sorted(set(self.boundaries)) != self.boundaries:
            raise ValueError("`boundaries` must increase")
        return self


class TrainPipeline(StrictModel):
    source: Source
    batch_size: PositiveInt = Field(description="the global batch size")
    shuffle: PositiveInt | None = Field(None, description="shuffle buffer size; none: no shuffling")
    cache: bool | str = Field(False, description="true: in memory; a string: a cache file path")
    drop_remainder: bool = Field(True, description="drop the last partial batch of each epoch")
    preprocess: list[LayerSpec] = Field([], description="layers applied to training and validation batches")
    augment: list[LayerSpec] = Field([], description="layers applied to training batches only")
    padded_batch: PaddedBatch | None = None
    bucket_by_sequence_length: BucketBySequenceLength | None = None
    in_memory: Literal["auto"] | bool = Field(
        "auto",
        description="keep arrays on the device and slice batches inside the compiled loop; "
        "auto: for array sources that fit the size budget",
    )


class Data(StrictModel):
    train: TrainPipeline
    validation: ValidationPipeline | None = None
    validation_split: float | None = Field(None, gt=0, lt=1, description="seeded random hold-out fraction")
    stratify: bool = Field(False, description="hold out the same fraction of each class of the (one) target")
    shard_policy: Literal["auto", "data", "file", "off"] = Field(
        "auto", description="tf.data auto-shard policy across workers; auto: file for tfrecord, else data"
    )

    @model_validator(mode="after")
    def _one_validation(self) -> "Data":
        if self.validation is not None and self.validation_split is not None:
            raise ValueError("give `validation` or `validation_split`, not both")
        if self.stratify and self.validation_split is None:
            raise ValueError("`stratify` stratifies the `validation_split`; there is none")
        return self
