"""`data`: where examples come from and how they are batched."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Discriminator, Field, PositiveInt, Tag, field_validator, model_validator

from tfgen.spec.models.applications import ApplicationPreprocess
from tfgen.spec.models.base import DottedRef, Identifier, LayerSpec, Shape, StrictModel


class PythonSource(StrictModel):
    """A function returning `(x, y)` arrays (or dicts of arrays keyed by input/target name), or a
    tf.data.Dataset of `(features, targets)`."""

    type: Literal["python"] = Field(description="a Python function", examples=["python"])
    function: DottedRef = Field(
        description="`package.module:function` returning `(x, y)` arrays, dicts of arrays keyed by "
        "input/target name, or a tf.data.Dataset of `(x, y)` examples",
        examples=["sklearn.datasets:load_digits"],
    )
    kwargs: dict[str, Any] = Field(
        {}, description="keyword arguments for the function", examples=[{"return_X_y": True}]
    )


class NpzSource(StrictModel):
    """A NumPy .npz file; `x` and `y` name its arrays (one name, or a mapping per input/target)."""

    type: Literal["npz"] = Field(description="a NumPy .npz file", examples=["npz"])
    path: str = Field(
        min_length=1,
        description="the .npz file (a relative path starts at the working directory)",
        examples=["data/mnist.npz"],
    )
    x: str | dict[Identifier, str] = Field(
        description="the array of the only input, or a mapping `{input: array name}`", examples=["x_train"]
    )
    y: str | dict[Identifier, str] = Field(
        description="the array of the only target, or a mapping `{target: array name}`", examples=["y_train"]
    )


class TFRecordFeature(StrictModel):
    """One feature of the records: its shape and its dtype as stored."""

    shape: Shape = Field([], description="the shape of one example's feature (`[]`: a scalar)", examples=[[784]])
    dtype: Literal["float32", "int64", "string"] = Field(
        "float32",
        description="the dtype stored in the records; cast to the input's or target's dtype",
        examples=["int64"],
    )


class TFRecordSource(StrictModel):
    """tf.train.Example records; `features` is the feature description, keyed like the inputs
    and targets they fill (other features are parsed and dropped)."""

    type: Literal["tfrecord"] = Field(description="tf.train.Example records", examples=["tfrecord"])
    files: str = Field(min_length=1, description="a file or glob pattern", examples=["data/train-*.tfrecord"])
    features: dict[str, TFRecordFeature] = Field(
        description="the feature description, keyed like the inputs and targets they fill",
        examples=[{"image": {"shape": [784]}, "label": {"dtype": "int64"}}],
    )
    compression: Literal["GZIP", "ZLIB"] | None = Field(
        None, description="the files' compression; null: uncompressed", examples=["GZIP"]
    )


class KerasSource(StrictModel):
    """A `keras.datasets` dataset, downloaded and cached by Keras on first use."""

    type: Literal["keras"] = Field(description="a keras.datasets dataset", examples=["keras"])
    dataset: Literal["mnist", "fashion_mnist", "cifar10", "cifar100", "boston_housing", "california_housing"] = Field(
        description="the dataset; column labels `(n, 1)` fit a target of shape `[]`", examples=["cifar10"]
    )
    split: Literal["train", "test"] = Field("train", description="which of its two splits", examples=["test"])


CSV_IN_MEMORY_MIB = 64  # larger CSV files stream from the file (see CsvSource)
Column = Annotated[str, Field(min_length=1)]
Columns = Column | Annotated[list[Column], Field(min_length=1)]


class CsvSource(StrictModel):
    """A CSV file with a header row; `x` and `y` name its columns (one column, or a list stacked into a vector
    along the last axis; one entry, or a mapping per input/target)."""

    type: Literal["csv"] = Field(description="a CSV file with a header row", examples=["csv"])
    path: str = Field(
        min_length=1,
        description=f"the CSV file (a relative path starts at the working directory); up to {CSV_IN_MEMORY_MIB} MiB "
        "it is read into memory, a larger one streams from the file (`data.train.in_memory` forces either)",
        examples=["data/houses.csv"],
    )
    x: Columns | dict[Identifier, Columns] = Field(
        description="the column (or list of columns) of the only input, or a mapping `{input: column or columns}`",
        examples=[{"features": ["sqft", "bedrooms", "age"], "city": "city"}],
    )
    y: Columns | dict[Identifier, Columns] = Field(
        description="the column of the only target, or a mapping `{target: column or columns}`",
        examples=["price"],
    )
    delimiter: str = Field(
        ",", min_length=1, max_length=1, description="the one ASCII character between fields", examples=[";"]
    )
    na_values: list[str] = Field(
        [],
        description="values read as missing: NaN in a float column (then refused as any non-finite value is, "
        "naming its row); an error in an integer or string column",
        examples=[["NA", ""]],
    )

    @field_validator("delimiter")
    @classmethod
    def _delimiter(cls, value: str) -> str:
        if value in ('"', "\n", "\r"):
            raise ValueError("a delimiter cannot be a quote or a line break")
        if len(value.encode("utf-8")) != 1:  # tf.io.decode_csv's field_delim is one byte
            raise ValueError(
                f"a delimiter is one ASCII character (TensorFlow's CSV reader splits on one byte); "
                f"{value!r} is {len(value.encode('utf-8'))} bytes in UTF-8"
            )
        return value


class TfdsSource(StrictModel):
    """A TensorFlow Datasets dataset (the `tfds` extra: `pip install "tfgen[tfds]"`), read in its
    stored order; `x` and `y` name its features, or (both omitted) its supervised `(input, target)` pair."""

    type: Literal["tfds"] = Field(description="a TensorFlow Datasets dataset", examples=["tfds"])
    name: str = Field(
        min_length=1,
        description="the dataset's TFDS name, with an optional `/config` and `:version`",
        examples=["mnist"],
    )
    split: str = Field(
        "train",
        min_length=1,
        description="the split, in TFDS's slicing syntax (`train[:80%]`, `train[80%:]`: hold part of a split "
        "out as `data.validation`)",
        examples=["train[:80%]"],
    )
    data_dir: str | None = Field(
        None,
        min_length=1,
        description="where TFDS keeps (and downloads) the data; null: TFDS's default (`~/tensorflow_datasets`)",
        examples=["data/tfds"],
    )
    x: str | dict[Identifier, str] | None = Field(
        None,
        description="the feature of the only input, or a mapping `{input: feature}`; null (with `y`): the "
        "dataset's supervised pair",
        examples=["image"],
    )
    y: str | dict[Identifier, str] | None = Field(
        None,
        description="the feature of the only target, or a mapping `{target: feature}`; null (with `x`): the "
        "dataset's supervised pair",
        examples=["label"],
    )

    @field_validator("name")
    @classmethod
    def _one_word(cls, value: str) -> str:
        if any(character.isspace() for character in value):
            raise ValueError(f"`{value}` is not a TFDS name (it has a space): e.g. `mnist` or `glue/sst2:2.0.0`")
        return value

    @model_validator(mode="after")
    def _both_or_neither(self) -> TfdsSource:
        if (self.x is None) != (self.y is None):
            raise ValueError(
                "give both `x` and `y` (feature names), or neither (the dataset's supervised `(input, target)` pair)"
            )
        return self


IMAGE_EXTENSIONS = ["png", "jpg", "jpeg", "bmp", "gif"]


def _extension(value: str) -> str:
    if not value.isascii() or not value.isalnum():
        raise ValueError(f"an extension is letters and digits without the dot (`png`), found `{value}`")
    return value


Extension = Annotated[str, AfterValidator(_extension)]


# The longest side `image_size` may have: an image of 8192 x 8192 is the most pixels the
# script decodes (tfgen_runtime/image_headers.py: PIXEL_CAP).
IMAGE_SIDE_MOST = 8192


class ImageFolderSource(StrictModel):
    """Images in one sub-folder per class (as `keras.utils.image_dataset_from_directory` reads
    them): the sorted sub-folder names are the classes of the one class target, the images fill
    the one input, decoded and resized as they stream."""

    type: Literal["image_folder"] = Field(description="image files in class sub-folders", examples=["image_folder"])
    directory: str = Field(
        min_length=1,
        description="the folder holding one sub-folder per class (a relative path starts at the working directory)",
        examples=["data/shapes"],
    )
    image_size: list[Annotated[int, Field(ge=1, le=IMAGE_SIDE_MOST)]] = Field(
        min_length=2,
        max_length=2,
        description=(
            "`[height, width]` every image is resized to (at most 8192 a side); "
            "the input's shape is `[height, width, channels]`"
        ),
        examples=[[32, 32]],
    )
    color_mode: Literal["rgb", "grayscale", "rgba"] = Field(
        "rgb", description="the images' channels: rgb 3, grayscale 1, rgba 4", examples=["grayscale"]
    )
    extensions: list[Extension] = Field(
        IMAGE_EXTENSIONS,
        min_length=1,
        description="the file extensions read (any case, no dot); other files are skipped",
        examples=[["png"]],
    )
    interpolation: Literal[
        "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"
    ] = Field("bilinear", description="how images are resized (`tf.image.resize`'s method)", examples=["nearest"])
    crop_to_aspect_ratio: bool = Field(
        False,
        description="crop each image's centre to the aspect ratio of `image_size` before resizing (no distortion)",
        examples=[True],
    )


class TextFolderSource(StrictModel):
    """UTF-8 text files (`.txt`) in one sub-folder per class (as
    `keras.utils.text_dataset_from_directory` reads them): one file is one example of the one
    `string` input, its sub-folder's name its class."""

    type: Literal["text_folder"] = Field(description="text files in class sub-folders", examples=["text_folder"])
    directory: str = Field(
        min_length=1,
        description="the folder holding one sub-folder per class (a relative path starts at the working directory)",
        examples=["data/reviews"],
    )


class SyntheticSource(StrictModel):
    """Random data of the declared input and target shapes."""

    type: Literal["synthetic"] = Field(description="random data", examples=["synthetic"])
    examples: PositiveInt = Field(description="how many random examples", examples=[1024])


Source = Annotated[
    PythonSource
    | NpzSource
    | TFRecordSource
    | KerasSource
    | SyntheticSource
    | TfdsSource
    | CsvSource
    | ImageFolderSource
    | TextFolderSource,
    Field(discriminator="type"),
]

# Sources that give arrays (a python function may also return a tf.data.Dataset; a large csv file streams).
# Folder sources (image_folder, text_folder) give file lists, decoded as they stream.
IN_MEMORY_SOURCES = ("python", "npz", "keras", "synthetic", "csv")


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
