"""`train.phases`: consecutive runs of epochs, each with its frozen layers and rate factor."""

from __future__ import annotations

from pydantic import Field, PositiveFloat, PositiveInt

from tfgen.spec.models.base import Identifier, StrictModel

TRUNK = "trunk"  # `frozen: [trunk]` freezes the shared layers (`model.layers`)


class Phase(StrictModel):
    """`{epochs: 2, frozen: [backbone]}`: these epochs train all but the frozen layers."""

    epochs: PositiveInt = Field(
        description="the phase's epochs (the phases cover `train.epochs` in order)", examples=[2]
    )
    frozen: list[Identifier] = Field(
        [],
        description="what this phase does not train: layer item names, `trunk` (the shared layers) or an output's "
        "name (its head); their variables get no gradient and no update, and their BatchNormalization layers run "
        "in inference mode",
        examples=[["backbone"]],
    )
    learning_rate_factor: PositiveFloat = Field(
        1.0,
        description="the optimizer's rate (after warmup and plateau) times this, during the phase",
        examples=[0.1],
    )
