"""What the scripts of the algorithms of several networks (`gan`, `custom`) share: the view
`nets` that templates/algorithms/_networks, _metrics and _epochs lay out (each network's builder
and optimizer, the history's names, the exports, the epoch's extras); each network's view
(network_view), planned on the spec seen as a supervised one of that network (as_supervised)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfgen.generate.code import keras_call, literal
from tfgen.generate.views import FieldView, LayerLine
from tfgen.generate.wiring import model_wiring
from tfgen.spec.models import LossSpec, Spec
from tfgen.spec.models.algorithms import Supervised
from tfgen.spec.models.model import Model, TargetSpec


@dataclass(frozen=True)
class NetworkView:
    """One network's builder: its inputs' constant, the wired layer lines, its optimizer."""

    name: str
    constant: str  # the name of its inputs' constant (GENERATOR_INPUTS)
    fields: list[FieldView]
    start: LayerLine
    trunk: list[LayerLine]
    heads: list[LayerLine]
    optimizer: str  # the optimizer's constructor call


@dataclass(frozen=True)
class NetworksView:
    networks: list[NetworkView]  # in the spec's order (a gan's: generator, discriminator)
    history: list[str]  # the training history's figures, each a keras.metrics.Mean
    exported: str  # the files export writes, as its docstring says them
    trained: str  # what main trains, as its docstring says it
    writes_samples: bool  # end_epoch calls write_samples (the template defines it)


def networks_view(networks: list[NetworkView], history: list[str], writes_samples: bool = False) -> NetworksView:
    """The shared view of `networks` (each's NetworkView, in the script's order)."""
    trained = "both networks" if len(networks) == 2 else "every network"
    return NetworksView(
        networks=networks,
        history=history,
        exported=spoken([f"{network.name}.keras" for network in networks]),
        trained=trained,
        writes_samples=writes_samples,
    )


def spoken(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def network_view(spec: Spec, name: str) -> NetworkView:
    """The network `name` of `spec.networks`: its inputs, its wired layer lines, its optimizer."""
    network = spec.networks[name]
    targets = {output: _any_target() for output in network.outputs}
    lowered = as_supervised(spec, network, targets, optimizer=spec.optimizers[name])
    wiring = model_wiring(lowered, list(network.outputs))
    fields = [
        FieldView(name=key, shape=literal(tuple(item.shape)), dtype=item.dtype, classes=None)
        for key, item in network.inputs.items()
    ]
    return NetworkView(
        name=name,
        constant=f"{name.upper()}_INPUTS",
        fields=fields,
        start=wiring.start.line(),
        trunk=[step.line() for step in wiring.trunk],
        heads=[step.line() for output in network.outputs for step in wiring.heads[output]],
        optimizer=keras_call(spec.optimizers[name], "optimizers"),
    )


def as_supervised(spec: Spec, model: Model, targets: dict[str, TargetSpec], optimizer: Any = None) -> Spec:
    """`spec` as a supervised one of `model` and `targets` (planning only: its losses are stand-ins)."""
    losses = {name: LossSpec.model_validate("MeanSquaredError") for name in targets}
    return spec.model_copy(
        update={
            "algorithm": Supervised(),
            "model": model,
            "networks": None,
            "optimizer": optimizer or spec.optimizers["generator"],
            "optimizers": None,
            "targets": targets,
            "losses": losses,
        }
    )


def _any_target() -> TargetSpec:
    return TargetSpec.model_validate({"shape": [], "dtype": "float32"})
