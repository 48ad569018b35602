"""The `tfds` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from tfgen.spec.models.base import Identifier, StrictModel


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
