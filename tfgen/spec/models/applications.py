"""Layer items that are not one Keras layer class: a `keras.applications` backbone, and its
family's input preprocessing written as stock Keras layers."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from tfgen.spec.application_preprocessing import preprocess_layer
from tfgen.spec.models.base import Identifier, LayerSpec, StrictModel

WEIGHT_FILES = (".weights.h5", ".keras")  # what a `weights` path may name (Keras's `load_weights` reads both)


class ApplicationSpec(StrictModel):
    """`{application: MobileNetV2, weights: imagenet, name: backbone, <argument>: value}`: a
    `keras.applications` model without its top, built on the shape of the tensor it is applied to."""

    model_config = StrictModel.model_config | {"strict": False}  # its own arguments are checked apart
    own_keys: ClassVar[tuple[str, ...]] = ("application", "weights", "name", "trainable", "batchnorm")

    application: str = Field(
        description="a `keras.applications` constructor (its classifier top is never built)",
        examples=["MobileNetV2"],
    )
    weights: str | None = Field(
        "imagenet",
        description="`imagenet`: the pretrained weights, downloaded and cached by Keras on first use; null: random "
        "initial weights; or the path of a `.weights.h5` or `.keras` file of the same application",
        examples=[None, "backbone.weights.h5"],
    )
    name: Identifier | None = Field(
        None, description="the backbone's layer name (`train.phases` freeze it by it)", examples=["backbone"]
    )
    trainable: bool = Field(True, description="false: frozen for the whole run", examples=[False])
    batchnorm: Literal["inference"] | None = Field(
        None,
        description="`inference`: the backbone's BatchNormalization layers run in inference mode and are not trained "
        "(their moving statistics, gamma and beta stay as loaded) while its other weights train, in every phase, as "
        "Keras's transfer-learning guide keeps them; null: they follow the backbone's `trainable` and the phases",
        examples=["inference"],
    )
    args: dict[str, Any] = Field(
        {},
        description="the constructor's own arguments (`alpha`, `pooling`, ...), written beside `application`",
        examples=[{"alpha": 0.35, "pooling": "avg"}],
    )

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        own = {key: value[key] for key in cls.own_keys if key in value}
        return {**own, "args": {k: v for k, v in value.items() if k not in own and k != "args"}}

    @field_validator("weights")
    @classmethod
    def _weights(cls, value: str | None) -> str | None:
        if value is None or value == "imagenet" or value.endswith(WEIGHT_FILES):
            return value
        raise ValueError(f"expected `imagenet`, null or a path ending in .weights.h5 or .keras, found {value!r}")

    @property
    def type(self) -> str:
        """The constructor's name (where a layer item's class name is read)."""
        return self.application

    @property
    def adapt_batches(self) -> None:
        return None


class ApplicationPreprocess(LayerSpec):
    """`{application_preprocess: MobileNetV2}`: the application family's `preprocess_input`, as the
    stock Keras layer that computes the same (so an exported model needs no custom objects)."""

    reserved: ClassVar[tuple[str, ...]] = ()
    application_preprocess: str = Field(
        description="a `keras.applications` constructor whose family's `preprocess_input` the layer computes",
        examples=["MobileNetV2"],
    )

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, dict) and "application_preprocess" in value and "type" not in value:
            extra = sorted(set(value) - {"application_preprocess", "name"})
            if extra:
                raise ValueError(f"`application_preprocess` takes only `name`, found `{extra[0]}`")
            layer = preprocess_layer(value["application_preprocess"])
            if "name" in value:
                layer["args"] = {**layer["args"], "name": value["name"]}
            return {**layer, "application_preprocess": value["application_preprocess"]}
        return value
