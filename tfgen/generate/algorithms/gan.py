"""The `gan` algorithm's planning: the shared parts of a script (header, data, constants) from the
supervised planner, on the spec seen as the discriminator's data; the two networks' wiring, the
two optimizers and the adversarial step's choices (GanView) for templates/algorithms/gan.py.jinja."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from tfgen.generate.algorithms.networks import NetworkView, as_supervised, network_view, networks_view
from tfgen.generate.code import literal
from tfgen.generate.identity import state_sha256
from tfgen.generate.plan import make_view
from tfgen.spec.gan_rules import gan_logs
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Model

TEMPLATE = "algorithms/gan.py.jinja"
NETWORKS = ("generator", "discriminator")
SAMPLES = 16  # the fixed noise's samples written each epoch
# Each loss's per-example discriminator and generator terms, of the scores (logits) of real and fake.
# non_saturating's discriminator term is the mean cross-entropy over the real and the fake example
# (keras.io's DCGAN: the mean over the batch of both); with label noise, against noisy targets.
NOISY_TARGETS = "sigmoid_cross_entropy(real_targets, real) + sigmoid_cross_entropy(fake_targets, fake)"
LOSSES = {
    "non_saturating": ("(tf.nn.softplus(-real) + tf.nn.softplus(fake)) / 2.0", "tf.nn.softplus(-fake)"),
    "wasserstein": ("fake - real", "-fake"),
    "hinge": ("tf.nn.relu(1.0 - real) + tf.nn.relu(1.0 + fake)", "-fake"),
}


@dataclass(frozen=True)
class GanView:
    generator: NetworkView
    discriminator: NetworkView
    noise: str  # the generator's noise input
    noise_shape: str  # a tuple literal
    real: str  # the generator's output, the discriminator's data input: the real examples
    score: str  # the discriminator's output
    discriminator_loss: str  # per example, of `real` and `fake` scores
    generator_loss: str  # per example, of `fake` scores
    gradient_penalty: float | None
    discriminator_steps: int
    label_noise: float | None  # non_saturating's targets lowered by up to this (None: exact targets)
    condition: str | None  # the class target both networks take one-hot (None: unconditional)
    classes: int | None  # the condition's classes
    image_shape: str | None  # a tuple literal: the samples' PNG grid (None: not image-shaped)
    history: list[str]  # the training history's loss keys
    samples: int


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    """The gan template, the shared view `v` (its data, constants) and the gan's `g`."""
    v = make_view(_as_data_spec(spec), **where)
    header = {**v.header, "state_sha256": state_sha256(spec)}
    logging = replace(v.logging, gradient_norm=False)  # two networks: no one gradient norm
    v = replace(v, header=header, docstring=_docstring(spec), imports=["import numpy as np"], logging=logging)
    g = gan_view(spec)
    nets = networks_view([g.generator, g.discriminator], g.history, writes_samples=True)
    return TEMPLATE, {"v": v, "g": g, "nets": nets}


def gan_view(spec: Spec) -> GanView:
    algorithm = spec.algorithm
    generator, discriminator = (spec.networks[name] for name in NETWORKS)
    noise = next(name for name in generator.inputs if name != algorithm.condition)
    real = next(iter(generator.outputs))
    condition = spec.targets.get(algorithm.condition) if algorithm.condition else None
    d_loss, g_loss = LOSSES[algorithm.loss]
    if algorithm.label_noise:
        d_loss = f"({NOISY_TARGETS}) / 2.0"
    history = gan_logs(spec)
    return GanView(
        generator=network_view(spec, "generator"),
        discriminator=network_view(spec, "discriminator"),
        noise=noise,
        noise_shape=literal(tuple(generator.inputs[noise].shape)),
        real=real,
        score=next(iter(discriminator.outputs)),
        discriminator_loss=d_loss,
        generator_loss=g_loss,
        gradient_penalty=algorithm.gradient_penalty,
        discriminator_steps=algorithm.discriminator_steps,
        label_noise=algorithm.label_noise,
        condition=algorithm.condition,
        classes=condition.class_count if condition else None,
        image_shape=_image_shape(discriminator.inputs[real].shape),
        history=history,
        samples=SAMPLES,
    )


def _as_data_spec(spec: Spec) -> Spec:
    """The spec as the supervised planner reads its data: a model of the discriminator's data
    inputs with a bare head per target (the source's labels), the discriminator's optimizer."""
    condition = spec.algorithm.condition  # a target of the data, not an input
    inputs = {name: item for name, item in spec.networks["discriminator"].inputs.items() if name != condition}
    model = Model.model_validate({"inputs": inputs, "outputs": {name: [] for name in spec.targets}})
    return as_supervised(spec, model, dict(spec.targets), optimizer=spec.optimizers["discriminator"])


def _image_shape(shape: list) -> str | None:
    """The (height, width, channels) a sample reshapes to, for a PNG grid (None: it does not)."""
    if len(shape) == 3 and shape[-1] in (1, 3):
        return literal(tuple(shape))
    if len(shape) == 2:
        return literal((*shape, 1))
    side = math.isqrt(shape[0]) if len(shape) == 1 else 0
    return literal((side, side, 1)) if side > 1 and side * side == shape[0] else None


def _docstring(spec: Spec) -> list[str]:
    algorithm = spec.algorithm
    extras = [f"gradient penalty {algorithm.gradient_penalty}"] if algorithm.gradient_penalty else []
    if algorithm.discriminator_steps > 1:
        extras.append(f"{algorithm.discriminator_steps} discriminator steps per generator step")
    if algorithm.condition:
        extras.append(f"conditioned on `{algorithm.condition}`")
    loss = ", ".join([f"{algorithm.loss} loss", *extras])
    source = spec.data.train.source
    data = f"`{source.function}`" if source.type == "python" else f"a `{source.type}` source"
    return [
        f"Train `{spec.name}`, a GAN, with a custom TensorFlow training loop.",
        "",
        f"Data: {data} (the real examples).",
        f"Networks: a generator and a discriminator ({loss}).",
        "Exports generator.keras and discriminator.keras; samples/epoch_NNN.npz each epoch.",
    ]
