"""The `python` source's spec model."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tfgen.spec.models.base import DottedRef, StrictModel


class PythonSource(StrictModel):
    """A function returning `(x, y)` arrays (or dicts of arrays keyed by input/target name), or a
    tf.data.Dataset of `(features, targets)`."""

    type: Literal["python"] = Field(description="a Python function", examples=["python"])
    function: DottedRef = Field(
        description="`package.module:function` returning `(x, y)` arrays, dicts of arrays keyed by "
        "input/target name, or a tf.data.Dataset of `(x, y)` examples",
        examples=["sklearn.datasets:load_digits"],
    )
    kwargs: dict[str, Any] = Field(
        {}, description="keyword arguments for the function", examples=[{"return_X_y": True}]
    )
