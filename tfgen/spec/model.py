"""`model` and `targets`: the network and what it is trained to predict."""

from __future__ import annotations

from typing import Any

from pydantic import Field, PositiveInt, model_validator

from .base import DottedRef, DType, Identifier, KerasObject, Shape, StrictModel


class InputSpec(StrictModel):
    shape: Shape
    dtype: DType = "float32"


class Model(StrictModel):
    """Either `layers` (a shared trunk) + `outputs` (named heads), or a `builder` function."""

    inputs: dict[Identifier, InputSpec] = Field(min_length=1)
    layers: list[KerasObject] = Field([], description="the shared trunk, applied in order")
    outputs: dict[Identifier, list[KerasObject]] = Field({}, description="named heads on the trunk")
    builder: DottedRef | None = Field(None, description="`package.module:function` returning a keras.Model")
    kwargs: dict[str, Any] = Field({}, description="keyword arguments for `builder`")

    @model_validator(mode="after")
    def _layers_or_builder(self) -> "Model":
        if self.builder is None and not self.outputs:
            raise ValueError("give `outputs` (with optional `layers`) or a `builder`")
        if self.builder is not None and (self.outputs or self.layers):
            raise ValueError("a `builder` model takes no `layers` or `outputs`")
        if self.kwargs and self.builder is None:
            raise ValueError("`kwargs` are passed to a `builder`; there is none")
        return self


class TargetSpec(StrictModel):
    shape: Shape = []
    dtype: DType = "float32"
    classes: PositiveInt | None = Field(None, description="number of classes, for class targets")
