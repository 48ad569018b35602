"""Building blocks shared by every section of the spec."""

from __future__ import annotations

import keyword
import re
import types
import typing
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GetJsonSchemaHandler, JsonSchemaValue
from pydantic_core import CoreSchema

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class StrictModel(BaseModel):
    """A spec section: unknown keys are errors, values are immutable once validated.

    Floats must be finite: the script writes them as Python literals, and `nan`/`inf` are not
    (free-form arguments are checked by `tfgen.crosscheck`). Types are strict: YAML's `true` is
    no batch size of 1, nor the string "16" or `0o17` (YAML 1.1 reads it as a string) a number.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def _identifier(value: str) -> str:
    if not value.isascii() and value.isidentifier():
        raise ValueError(
            f"`{value}` is not a valid name: names must be ASCII (TensorFlow's name scopes, which "
            "Keras makes from input, output and model names, refuse other letters)"
        )
    if not IDENTIFIER.match(value):
        raise ValueError(f"`{value}` is not a valid name: use letters, digits and _, not starting with a digit")
    if keyword.iskeyword(value) or keyword.issoftkeyword(value):
        raise ValueError(f"`{value}` is a Python keyword and cannot name anything in the generated script")
    return value


def _dotted_ref(value: str) -> str:
    module, sep, function = value.partition(":")
    if not sep or not DOTTED.match(module) or not IDENTIFIER.match(function):
        raise ValueError(f"expected `package.module:function`, found `{value}`")
    if any(keyword.iskeyword(part) for part in [*module.split("."), function]):
        raise ValueError(f"`{value}` contains a Python keyword")
    # No shadowing check is needed: the script imports a `module:function` only when it calls
    # it (`rt.function`), never as a top-level name.
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]
DottedRef = Annotated[str, AfterValidator(_dotted_ref)]
Column = Annotated[str, Field(min_length=1)]  # an array's or a column's name in a data file
DType = Literal["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
InputDType = Literal[
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "string"
]  # a model input may hold strings (one per element: `[]` is one string per example)
Shape = list[Annotated[int, AfterValidator(lambda v: _positive_dim(v))] | None]  # None: variable length


def _positive_dim(value: int) -> int:
    if value < 1:
        raise ValueError(f"a dimension must be at least 1, found {value}")
    return value


class KerasObject(BaseModel):
    """A Keras object written as Keras names it: `Name` or `{type: Name, <argument>: value, ...}`.

    The class and argument names are checked against the committed Keras catalog by
    `tfgen.validate` (which knows what kind of object each place of the spec takes).
    """

    model_config = ConfigDict(frozen=True, allow_inf_nan=False, strict=True)  # a loss's `weight`
    # Keys that tfgen itself reads, as opposed to constructor arguments (see LossSpec).
    reserved: ClassVar[tuple[str, ...]] = ()
    reserved_schema: ClassVar[dict[str, Any]] = {}

    type: str
    args: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"type": value}
        if isinstance(value, dict):
            if "type" not in value:
                raise ValueError("expected a Keras class name or a mapping with a `type` key")
            own = {key: value[key] for key in ("type", *cls.reserved) if key in value}
            return {**own, "args": {k: v for k, v in value.items() if k not in own}}
        raise ValueError(f"expected a Keras class name or a mapping with a `type` key, found {value!r}")

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        properties: dict[str, Any] = {
            "type": {"type": "string", "description": "Keras class name, or `package.module:Name` (your own class)"}
        }
        properties.update(cls.reserved_schema)
        return {
            "anyOf": [
                {"type": "string", "description": "Keras class name or `package.module:Name` (no arguments)"},
                {
                    "type": "object",
                    "properties": properties,
                    "required": ["type"],
                    "additionalProperties": True,
                    "description": "Keras class name and constructor arguments",
                },
            ]
        }


ADAPT_BATCHES = 64  # `adapt: true`: training batches an adapted layer's statistics are computed on


class Adapt(StrictModel):
    """`adapt: {batches: N}`: compute the layer's statistics on the first N training batches."""

    batches: int = Field(
        ADAPT_BATCHES, ge=1, description="training batches the statistics are computed on", examples=[16]
    )


class LayerSpec(KerasObject):
    """A Keras layer; `adapt` (a tfgen key, not a Keras argument) fits its statistics
    (`Normalization`, `Discretization` and the vocabulary of `IntegerLookup`, `StringLookup`,
    `TextVectorization`) on training batches before the first step."""

    reserved: ClassVar[tuple[str, ...]] = ("adapt",)
    reserved_schema: ClassVar[dict[str, Any]] = {
        "adapt": {
            "anyOf": [
                {"type": "boolean"},
                {
                    "type": "object",
                    "properties": {
                        "batches": {
                            "type": "integer",
                            "minimum": 1,
                            "default": ADAPT_BATCHES,
                            "description": "training batches the statistics are computed on",
                            "examples": [16],
                        }
                    },
                    "additionalProperties": False,
                },
            ],
            "description": "a tfgen key, not a Keras argument: `true` or `{batches: N}` (`true`: "
            f"{ADAPT_BATCHES}): before the first step, compute the layer's statistics (`Normalization`, "
            "`Discretization`, the vocabulary of `IntegerLookup`, `StringLookup`, `TextVectorization`) on the first "
            "N training batches; on a layer of `model.branches`, `model.layers` or `model.outputs` only",
            "default": False,
            "examples": [True],
        }
    }

    adapt: Annotated[
        Annotated[bool, Tag("flag")] | Annotated[Adapt, Tag("mapping")],
        Discriminator(lambda value: "flag" if isinstance(value, bool) else "mapping"),
    ] = False

    @field_validator("adapt", mode="before")
    @classmethod
    def _adapt_setting(cls, value: Any) -> Any:
        if not isinstance(value, (bool, dict, Adapt)):
            # pydantic reports a ValueError as a validation error of the field (a TypeError escapes it)
            raise ValueError(f"expected `true`, `false` or `{{batches: N}}`, found {value!r}")  # noqa: TRY004
        return value

    @property
    def adapt_batches(self) -> int | None:
        """How many training batches the layer adapts on; None: not adapted."""
        if self.adapt is False:
            return None
        return ADAPT_BATCHES if self.adapt is True else self.adapt.batches


def unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation may hold (Annotated and unions flattened)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in unwrap(arg)]
    return [annotation]


def field_types(kinds: list[Any], part: str | int) -> list[Any]:
    """The types the schema allows at `part` below any of `kinds` (models, dicts or lists)."""
    following: list[Any] = []
    for kind in kinds:
        if isinstance(kind, type) and issubclass(kind, BaseModel) and part in kind.model_fields:
            following.extend(unwrap(kind.model_fields[part].annotation))
        elif typing.get_origin(kind) is dict:
            following.extend(unwrap(typing.get_args(kind)[1]))
        elif typing.get_origin(kind) is list:
            following.extend(unwrap(typing.get_args(kind)[0]))
    return following
