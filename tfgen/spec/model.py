"""`model` and `targets`: the network and what it is trained to predict."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, PositiveInt, Tag, model_validator

from .base import DottedRef, DType, Identifier, LayerSpec, Shape, StrictModel


class Residual(StrictModel):
    """`{residual: [layers]}`: the layers' output is added to their input (a skip connection)."""

    residual: list["Layer"] = Field(min_length=1)


def _layer_kind(value: Any) -> str:
    if isinstance(value, Residual) or (isinstance(value, dict) and "residual" in value and "type" not in value):
        return "residual"
    return "keras"


Layer = Annotated[
    Union[Annotated[Residual, Tag("residual")], Annotated[LayerSpec, Tag("keras")]],
    Discriminator(_layer_kind),
]
Residual.model_rebuild()


class InputSpec(StrictModel):
    shape: Shape
    dtype: DType = "float32"
    vocabulary: PositiveInt | None = Field(
        None, description="integer inputs: ids are below this (synthetic data draws from it; default 2)"
    )


class Model(StrictModel):
    """Either `layers` (a shared trunk) + `outputs` (named heads), or a `builder` function."""

    inputs: dict[Identifier, InputSpec] = Field(min_length=1)
    layers: list[Layer] = Field([], description="the shared trunk, applied in order")
    outputs: dict[Identifier, list[Layer]] = Field({}, description="named heads on the trunk")
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
