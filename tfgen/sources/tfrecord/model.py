"""The `tfrecord` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tfgen.spec.models.base import Shape, StrictModel


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
