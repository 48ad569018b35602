"""`sweep`: a hyperparameter search over the spec, run by `tfgen sweep` (the script ignores it)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, NonNegativeInt, PositiveInt

from tfgen.spec.models.base import StrictModel
from tfgen.spec.sweep_space import FORMS, parse_expression


def _expression(expression: Any) -> Any:
    parse_expression("", expression)  # ValueError: pydantic locates it at the entry
    return expression


SpaceExpression = Annotated[Any, AfterValidator(_expression)]


class Sweep(StrictModel):
    """What `tfgen sweep` varies, how many trials it runs, and what it keeps."""

    trials: PositiveInt = Field(
        20, description="trials in the study, over all workers (`--trials` overrides it)", examples=[50]
    )
    monitor: str = Field(
        "val_loss",
        description="the history figure each trial reports per epoch and is ranked by",
        examples=["val_loss"],
    )
    mode: Literal["min", "max"] = Field(
        "min", description="whether a lower or a higher `monitor` is better", examples=["max"]
    )
    space: dict[str, SpaceExpression] = Field(
        min_length=1,
        description=f"`{{dotted.path: expression}}`: each a place the spec sets, and {FORMS}",
        examples=[{"optimizer.learning_rate": "log(1e-4,1e-2)", "model.layers.0.units": [64, 128, 256]}],
    )
    pruner: Literal["median", "none"] = Field(
        "median",
        description="`median`: stop a trial whose figure is worse than the median of finished trials'",
        examples=["none"],
    )
    startup_trials: NonNegativeInt = Field(3, description="finished trials before the pruner stops any", examples=[5])
    warmup_epochs: NonNegativeInt = Field(
        0, description="epochs of each trial before the pruner may stop it", examples=[2]
    )
    seed: NonNegativeInt | None = Field(
        None, description="seeds the sampler (TPE): the same suggestions again", examples=[7]
    )
