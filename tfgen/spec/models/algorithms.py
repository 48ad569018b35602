"""`algorithm`: what one training step does (a discriminated union on `type`).

Each algorithm is a unit (docs/algorithms.md): its model here, its rules in
tfgen/spec/<name>_rules.py, its planning in tfgen/generate/algorithms/<name>.py and its templates
in tfgen/generate/templates/algorithms/; `supervised`, today's step, is the default.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, PositiveFloat, PositiveInt

from tfgen.spec.models.base import Identifier, StrictModel


class Supervised(StrictModel):
    """One `model:` and one `optimizer:`; a loss per output against its data target."""

    type: Literal["supervised"] = Field(
        "supervised", description="today's step: one model, one optimizer", examples=["supervised"]
    )


class Gan(StrictModel):
    """A generative adversarial network: `networks: {generator, discriminator}`, one optimizer each."""

    type: Literal["gan"] = Field(description="a generator against a discriminator", examples=["gan"])
    loss: Literal["non_saturating", "wasserstein", "hinge"] = Field(
        "non_saturating",
        description="the adversarial loss: `non_saturating` (DCGAN's), `wasserstein` (WGAN) or `hinge`",
        examples=["wasserstein"],
    )
    gradient_penalty: PositiveFloat | None = Field(
        None,
        description="WGAN-GP: this weight times (|grad D(interpolate)| - 1)^2 is added to the discriminator's loss",
        examples=[10.0],
    )
    discriminator_steps: PositiveInt = Field(
        1, description="discriminator updates per generator update (WGAN-GP: 5)", examples=[5]
    )
    condition: Identifier | None = Field(
        None,
        description="a class target fed (one-hot) to both networks as their input of that name: a conditional GAN",
        examples=["digit"],
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


ALGORITHM_TYPES = (Supervised, Gan, Distillation)
Algorithm = Annotated[Supervised | Gan | Distillation, Discriminator("type")]
