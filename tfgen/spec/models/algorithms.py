"""`algorithm`: what one training step does (a discriminated union on `type`).

Each algorithm is a unit (docs/algorithms.md): its model here, its rules in
tfgen/spec/<name>_rules.py, its planning in tfgen/generate/algorithms/<name>.py and its templates
in tfgen/generate/templates/algorithms/; `supervised`, today's step, is the default.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, PositiveFloat, PositiveInt, field_validator, model_serializer

from tfgen.spec.models.base import DottedRef, Identifier, LayerSpec, StrictModel


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
    label_noise: PositiveFloat | None = Field(
        None,
        description="`non_saturating` only: the discriminator's targets, 1 for each real example and 0 for each "
        "fake, are each lowered by this times a uniform draw in [0, 1) (keras.io's DCGAN: 0.05)",
        examples=[0.05],
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


class Custom(StrictModel):
    """Your own step: `networks:` and `optimizers:` (one per network), a function of yours that
    takes the networks, the batch and a context (rt.StepContext), and returns the figures logged."""

    type: Literal["custom"] = Field(description="your own step (docs/algorithms.md#custom)", examples=["custom"])
    step: DottedRef = Field(
        description="`module:function`, found like other references (the spec's folder, the working directory, "
        "sys.path): `step(networks, features, targets, ctx)`, called per replica inside tf.function",
        examples=["my_steps:train_step"],
    )
    logs: list[Identifier] = Field(
        min_length=1,
        description="the names of the figures the step returns (per example, or one per batch): the history's "
        "columns, each the mean over the epoch's examples",
        examples=[["loss", "accuracy"]],
    )

    @field_validator("logs")
    @classmethod
    def _distinct(cls, logs: list[str]) -> list[str]:
        twice = sorted({name for name in logs if logs.count(name) > 1})
        if twice:
            raise ValueError(f"each name once: {', '.join(f'`{name}`' for name in twice)} repeated")
        return logs


class Contrastive(StrictModel):
    """Self-supervised: the model (the encoder) learns from two random views of each example
    (SimCLR's NT-Xent over the global batch, or SimSiam); no targets; the encoder alone is exported."""

    type: Literal["contrastive"] = Field(
        description="self-supervised contrastive learning (docs/algorithms.md#contrastive)", examples=["contrastive"]
    )
    method: Literal["simclr", "simsiam"] = Field(
        "simclr",
        description="`simclr`: NT-Xent, each example's negatives the other views of the global batch; "
        "`simsiam`: the symmetric negative cosine of a predictor against the stopped projection",
        examples=["simsiam"],
    )
    views: list[LayerSpec] = Field(
        min_length=1,
        description="Keras random layers (each takes a `seed`: RandomFlip, RandomTranslation, GaussianNoise, ...) "
        "applied twice to every training example, independently: its two views",
        examples=[[{"type": "RandomFlip"}, {"type": "RandomTranslation", "height_factor": 0.1, "width_factor": 0.1}]],
    )
    projection: list[LayerSpec] = Field(
        min_length=1,
        description="the projection head's layers, on the encoder's output; trained with it, not exported",
        examples=[[{"type": "Dense", "units": 64, "activation": "relu"}, {"type": "Dense", "units": 32}]],
    )
    predictor: list[LayerSpec] | None = Field(
        None,
        description="simsiam only: the predictor's layers, on the projection (its output as wide as the projection's)",
        examples=[[{"type": "Dense", "units": 32}]],
    )
    temperature: PositiveFloat = Field(
        0.1, description="simclr: the softmax temperature of the cosine similarities", examples=[0.1]
    )
    negatives: Literal["both_views", "other_view"] = Field(
        "both_views",
        description="simclr: each view's candidates; `both_views`: the 2N - 1 other views of the global batch "
        "(2N - 2 negatives, as the SimCLR paper); `other_view`: the N views of the other side "
        "(N - 1 negatives, as keras.io's SimCLR example)",
        examples=["other_view"],
    )
    probe: Identifier | None = Field(
        None,
        description="a class target: after each epoch a linear classifier of the frozen representations, fitted on "
        "the training split, is scored on the validation data (`probe_accuracy`)",
        examples=["digit"],
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The fields, less `negatives` at its default: a spec without it dumps (and so hashes
        into its STATE_SHA256) as it did before the option."""
        data = handler(self)
        if self.negatives == "both_views":
            data.pop("negatives", None)
        return data


ALGORITHM_TYPES = (Supervised, Gan, Distillation, Custom, Contrastive)
Algorithm = Annotated[Supervised | Gan | Distillation | Custom | Contrastive, Discriminator("type")]
