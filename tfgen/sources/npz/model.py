"""The `npz` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tfgen.spec.models.base import Identifier, StrictModel


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
