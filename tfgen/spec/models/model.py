"""`model` and `targets`: the network and what it is trained to predict."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    PositiveInt,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

from tfgen.spec.models.applications import ApplicationPreprocess, ApplicationSpec
from tfgen.spec.models.base import DottedRef, DType, Identifier, InputDType, LayerSpec, Shape, StrictModel


class Residual(StrictModel):
    """`{residual: [layers]}`: the layers' output is added to their input (a skip connection)."""

    residual: list[Layer] = Field(
        min_length=1,
        description="layers whose output is added to the block's input (a skip connection)",
        examples=[[{"type": "Dense", "units": 64}]],
    )


ITEM_KINDS = {  # the key that makes a layer item other than one Keras layer class, and its tag
    "residual": (Residual, "residual"),
    # Tags that are not keys of the item: pydantic puts the tag in an error's location.
    "application": (ApplicationSpec, "backbone"),
    "application_preprocess": (ApplicationPreprocess, "family_preprocessing"),
}


def _layer_kind(value: Any) -> str:
    for key, (kind, tag) in ITEM_KINDS.items():
        if isinstance(value, kind) or (isinstance(value, dict) and key in value and "type" not in value):
            return tag
    return "keras"


Layer = Annotated[
    Annotated[Residual, Tag("residual")]
    | Annotated[ApplicationSpec, Tag("backbone")]
    | Annotated[ApplicationPreprocess, Tag("family_preprocessing")]
    | Annotated[LayerSpec, Tag("keras")],
    Discriminator(_layer_kind),
]
Residual.model_rebuild()


class InputSpec(StrictModel):
    """One model input: the shape and dtype of one example."""

    shape: Shape = Field(
        description="the shape of one example (no batch axis); `null` marks a variable-length dimension",
        examples=[[28, 28, 1]],
    )
    dtype: InputDType = Field(
        "float32",
        description="the input's dtype; `string`: text or category names (shape `[]`: one string per example)",
        examples=["int32", "string"],
    )
    vocabulary: PositiveInt | None = Field(
        None,
        description="integer inputs: ids are below this (synthetic data draws from it); null: 2. String inputs: "
        "synthetic strings draw their words from this many; null: 16",
        examples=[10000],
    )


class Model(StrictModel):
    """Either `layers` (a shared trunk) + `outputs` (named heads), after optional per-input
    `branches` merged into the trunk, or a `builder` function."""

    inputs: dict[Identifier, InputSpec] = Field(
        min_length=1, description="one entry per model input", examples=[{"pixels": {"shape": [64]}}]
    )
    branches: dict[Identifier, Annotated[list[Layer], Field(min_length=1)]] = Field(
        {},
        description="`{input: [layers]}`: an input's own layers, applied before the merge; an input without a "
        "branch is merged as it is",
        examples=[{"features": [{"type": "Normalization", "adapt": True}]}],
    )
    merge: Literal["concatenate", "add", "average", "multiply"] = Field(
        "concatenate",
        description="how several inputs (after their branches) become the trunk's one input: `concatenate` (on "
        "the last axis), `add`, `average` or `multiply` (equal shapes)",
        examples=["add"],
    )
    layers: list[Layer] = Field(
        [],
        description="the shared trunk, applied in order; an item `{residual: [layers]}` adds the block's input to "
        "its output",
        examples=[
            [{"type": "Dense", "units": 128, "activation": "relu"}, {"residual": [{"type": "Dense", "units": 128}]}]
        ],
    )
    outputs: dict[Identifier, list[Layer]] = Field(
        {},
        description="`{output: [layers]}`: one head per output, on the trunk",
        examples=[{"digit": [{"type": "Dense", "units": 10}]}],
    )
    builder: DottedRef | None = Field(
        None,
        description="`package.module:function` returning a keras.Model whose outputs are a dict keyed by target "
        "name (instead of `branches`/`layers`/`outputs`); its input a dict keyed by input name, or, when the spec "
        "has one input, one tensor",
        examples=["mymodels:build"],
    )
    kwargs: dict[str, Any] = Field({}, description="keyword arguments for `builder`", examples=[{"width": 64}])

    @model_validator(mode="after")
    def _layers_or_builder(self) -> Model:
        if self.builder is None and not self.outputs:
            raise ValueError("give `outputs` (with optional `layers`) or a `builder`")
        if self.builder is not None and (self.outputs or self.layers):
            raise ValueError("a `builder` model takes no `layers` or `outputs`")
        if self.kwargs and self.builder is None:
            raise ValueError("`kwargs` are passed to a `builder`; there is none")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The fields, less `branches` and `merge` where they hold their defaults: a model
        without branches dumps (and so hashes into a run's STATE_SHA256) as it did before them."""
        data = handler(self)
        if not self.branches:
            data.pop("branches", None)
        if self.merge == "concatenate":
            data.pop("merge", None)
        return data


def _class_names(names: list[str]) -> list[str]:
    if len(names) < 2:
        raise ValueError(f"list at least 2 class names, found {len(names)}")
    if "" in names:
        raise ValueError(f"class {names.index('')} has an empty name")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"class `{name}` is listed twice (ids are the list order: each name once)")
        seen.add(name)
    return names


ClassNames = Annotated[list[str], AfterValidator(_class_names)]
# A class count or the class names: a list is checked as names only (one error, not one per kind).
Classes = Annotated[
    Annotated[PositiveInt, Tag("count")] | Annotated[ClassNames, Tag("names")],
    Discriminator(lambda value: "names" if isinstance(value, list) else "count"),
]


class TargetSpec(StrictModel):
    """What one output is trained to predict."""

    @model_validator(mode="before")
    @classmethod
    def _named_classes_are_ids(cls, value: Any) -> Any:
        """Named classes are trained on their ids: the dtype defaults to int32 for them."""
        if isinstance(value, dict) and isinstance(value.get("classes"), list) and "dtype" not in value:
            return {**value, "dtype": "int32"}
        return value

    shape: Shape = Field(
        [],
        description="the shape of one example's target (`[]`: a scalar label); `null` marks a variable-length "
        "dimension",
        examples=[[4]],
    )
    dtype: DType = Field(
        "float32",
        description="the target's dtype (never `string`: string labels need `classes: [names]`); with named "
        "`classes`: int32",
        examples=["int32"],
    )
    classes: Classes | None = Field(
        None,
        description="a class target's number of classes, or its class names (ids are the list order; string "
        "labels are mapped to them): labels outside `[0, classes)` stop the run before the first step, and "
        "synthetic labels are drawn below it",
        examples=[10, ["circle", "square", "stripes"]],
    )

    @field_validator("dtype", mode="before")
    @classmethod
    def _no_string_target(cls, value: Any) -> Any:
        if value == "string":
            raise ValueError(
                "a target cannot be `string`: string labels need a class target that lists its names, "
                "`classes: [name, ...]` (they are mapped to the ids 0, 1, ...)"
            )
        return value

    @property
    def class_count(self) -> int | None:
        """How many classes the target has (None: not a class target)."""
        if isinstance(self.classes, list):
            return len(self.classes)
        return self.classes

    @property
    def class_names(self) -> tuple[str, ...] | None:
        """The listed class names in id order (None: not listed)."""
        if isinstance(self.classes, list):
            return tuple(self.classes)
        return None
