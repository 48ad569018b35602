"""`algorithm`: what one training step does (a discriminated union on `type`).

Each algorithm is a unit (docs/algorithms.md): its model here, its rules in
tfgen/spec/<name>_rules.py, its planning in tfgen/generate/algorithms/<name>.py and its templates
in tfgen/generate/templates/algorithms/; `supervised`, today's step, is the default.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field

from tfgen.spec.models.base import StrictModel


class Supervised(StrictModel):
    """One model, one optimizer: a loss per output against its target (the default)."""

    type: Literal["supervised"] = Field(
        "supervised", description="a loss per output against its target", examples=["supervised"]
    )


class Distillation(StrictModel):
    """The model (the student) learns its targets and a frozen teacher's softened outputs, as
    `keras.distillation.Distiller` with `LogitsDistillation` does; the student alone is exported."""

    type: Literal["distillation"] = Field(
        description="the model learns from a frozen teacher too", examples=["distillation"]
    )
    teacher: str = Field(
        min_length=1,
        description="the teacher's Keras model file (`.keras`; a tfgen run's `model.keras` included; a relative "
        "path starts at the working directory); loaded and frozen when the script starts, so it may not exist "
        "when the script is built",
        examples=["runs/digits/model.keras"],
    )
    temperature: float = Field(
        3.0,
        gt=0,
        description="T: both outputs are divided by T before the softmax; the KL term is multiplied by T^2",
        examples=[3.0],
    )
    student_loss_weight: float = Field(
        0.5,
        ge=0,
        le=1,
        description="the weight of the student's losses against the targets; the KL term gets 1 - this weight",
        examples=[0.1],
    )


ALGORITHM_TYPES = (Supervised, Distillation)
Algorithm = Annotated[Supervised | Distillation, Discriminator("type")]
