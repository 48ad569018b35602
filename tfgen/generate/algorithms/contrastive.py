"""The `contrastive` algorithm's planning: the shared parts of a script (header, data, constants,
early stopping, exports) from the supervised planner, on the spec seen as the encoder's data; the
encoder's wiring, the views, the projection head (and SimSiam's predictor), the loss and the
probe (ContrastiveView) for templates/algorithms/contrastive.py.jinja."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tfgen.generate.algorithms.networks import NetworkView, as_supervised, network_view, networks_view
from tfgen.generate.code import float32_head, keras_call, literal
from tfgen.generate.identity import state_sha256
from tfgen.generate.plan import make_view
from tfgen.spec.contrastive_rules import history_keys
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Model

TEMPLATE = "algorithms/contrastive.py.jinja"
ENCODER = "encoder"
# simclr's `negatives` -> the runtime's NT-Xent, and how the script's docstring names it.
NT_XENT = {"both_views": "nt_xent", "other_view": "nt_xent_other_view"}
SIMCLR = {
    "both_views": "SimCLR (NT-Xent over the global batch)",
    "other_view": "SimCLR (NT-Xent, each view against the other views of the global batch)",
}


@dataclass(frozen=True)
class ContrastiveView:
    encoder: NetworkView
    representation: str  # the encoder's one output
    views: list[str]  # the random layers' constructor calls
    projection: list[str]  # the projection head's layers' constructor calls
    predictor: list[str]  # simsiam's predictor's (none for simclr)
    simclr: bool  # NT-Xent (else SimSiam)
    temperature: str  # a literal (simclr)
    nt_xent: str  # simclr's loss in the runtime, by its `negatives`
    probe: str | None  # the probe's class target (None: no probe)
    probe_classes: int | None
    history: list[str]  # the training history's per-example figures (each a Mean)


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    """The contrastive template, the shared view `v` (its data, constants, trackers), the
    metrics' `nets` and the algorithm's `k`."""
    # No `predict`/`evaluate`: an encoder has no outputs against targets to predict or score.
    v = make_view(_as_data_spec(spec), commands=False, **where)
    header = {**v.header, "state_sha256": state_sha256(spec)}
    v = replace(v, header=header, docstring=_docstring(spec))
    k = contrastive_view(spec)
    return TEMPLATE, {"v": v, "k": k, "nets": networks_view([k.encoder], k.history)}


def contrastive_view(spec: Spec) -> ContrastiveView:
    algorithm = spec.algorithm
    probe = spec.targets.get(algorithm.probe) if algorithm.probe else None
    as_network = spec.model_copy(update={"networks": {ENCODER: spec.model}, "optimizers": {ENCODER: spec.optimizer}})
    logged = [key for key in history_keys(spec) if key not in ("probe_accuracy", "lr")]
    return ContrastiveView(
        encoder=network_view(as_network, ENCODER),
        representation=next(iter(spec.model.outputs)),
        views=[keras_call(layer, "layers") for layer in algorithm.views],
        projection=_head(spec, algorithm.projection),
        predictor=_head(spec, algorithm.predictor or []),
        simclr=algorithm.method == "simclr",
        temperature=literal(algorithm.temperature),
        nt_xent=NT_XENT[algorithm.negatives],
        probe=algorithm.probe,
        probe_classes=probe.class_count if probe else None,
        history=logged,
    )


def _head(spec: Spec, layers: list) -> list[str]:
    """A head's layers' constructor calls; under a mixed precision, the last computes in float32
    (the loss never runs in float16)."""
    if layers and spec.precision != "float32":
        layers = float32_head(layers)
    return [keras_call(layer, "layers") for layer in layers]


def _as_data_spec(spec: Spec) -> Spec:
    """The spec as the supervised planner reads its data: a model of the encoder's inputs with
    a bare head per target (the probe's labels), the encoder's optimizer."""
    model = Model.model_validate({"inputs": spec.model.inputs, "outputs": {name: [] for name in spec.targets}})
    return as_supervised(spec, model, dict(spec.targets), optimizer=spec.optimizer)


def _docstring(spec: Spec) -> list[str]:
    algorithm = spec.algorithm
    source = spec.data.train.source
    data = f"`{source.function}`" if source.type == "python" else f"a `{source.type}` source"
    method = SIMCLR[algorithm.negatives] if algorithm.method == "simclr" else "SimSiam"
    probe = f"; a linear probe on `{algorithm.probe}` each epoch" if algorithm.probe else ""
    return [
        f"Train `{spec.name}`, a self-supervised encoder, with a custom TensorFlow training loop.",
        "",
        f"Data: {data}, two random views of each example.",
        f"Method: {method}{probe}.",
        "Exports the encoder alone (model.keras).",
    ]
