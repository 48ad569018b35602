"""The `synthetic` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt

from tfgen.spec.models.base import StrictModel


class SyntheticSource(StrictModel):
    """Random data of the declared input and target shapes."""

    type: Literal["synthetic"] = Field(description="random data", examples=["synthetic"])
    examples: PositiveInt = Field(description="how many random examples", examples=[1024])
