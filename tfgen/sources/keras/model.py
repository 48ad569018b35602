"""The `keras` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tfgen.spec.models.base import StrictModel


class KerasSource(StrictModel):
    """A `keras.datasets` dataset, downloaded and cached by Keras on first use."""

    type: Literal["keras"] = Field(description="a keras.datasets dataset", examples=["keras"])
    dataset: Literal["mnist", "fashion_mnist", "cifar10", "cifar100", "boston_housing", "california_housing"] = Field(
        description="the dataset; column labels `(n, 1)` fit a target of shape `[]`", examples=["cifar10"]
    )
    split: Literal["train", "test"] = Field("train", description="which of its two splits", examples=["test"])
