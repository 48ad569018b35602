"""The `custom` algorithm's planning: the shared parts of a script (header, data, constants) from
the supervised planner, on the spec seen as its first network's data; each network's wiring and
optimizer (networks.py's NetworkView), and the user's step with its declared logs (StepView) for
templates/algorithms/custom.py.jinja."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tfgen.generate.algorithms.networks import as_supervised, network_view, networks_view, spoken
from tfgen.generate.code import literal
from tfgen.generate.identity import state_sha256
from tfgen.generate.plan import make_view
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Model

TEMPLATE = "algorithms/custom.py.jinja"


@dataclass(frozen=True)
class StepView:
    step: str  # the user's `module:function`
    logs: list[str]  # the history's columns, as the step returns them
    clipping: str  # a literal: (kind, limit) of train.gradient_clipping, or None
    first: str  # the first network: its inputs are the data's features, its optimizer's rate the history's lr


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    """The custom template, the shared view `v` (its data, constants), the networks' `nets` and
    the step's `c`."""
    v = make_view(_as_data_spec(spec), **where)
    header = {**v.header, "state_sha256": state_sha256(spec)}
    logging = replace(v.logging, gradient_norm=False)  # the step's own gradients: no one norm
    v = replace(v, header=header, docstring=_docstring(spec), logging=logging)
    nets = networks_view([network_view(spec, name) for name in spec.networks], list(spec.algorithm.logs))
    return TEMPLATE, {"v": v, "c": custom_view(spec), "nets": nets}


def custom_view(spec: Spec) -> StepView:
    clipping = spec.train.gradient_clipping
    kind = next(
        (k for k in ("global_norm", "norm", "value") if clipping and getattr(clipping, k)),
        None,
    )
    return StepView(
        step=spec.algorithm.step,
        logs=list(spec.algorithm.logs),
        clipping=literal((kind, getattr(clipping, kind))) if kind else "None",
        first=next(iter(spec.networks)),
    )


def _as_data_spec(spec: Spec) -> Spec:
    """The spec as the supervised planner reads its data: a model of the first network's inputs
    with a bare head per target, the first network's optimizer."""
    first = next(iter(spec.networks))
    inputs = spec.networks[first].inputs
    model = Model.model_validate({"inputs": inputs, "outputs": {name: [] for name in spec.targets}})
    return as_supervised(spec, model, dict(spec.targets), optimizer=spec.optimizers[first])


def _docstring(spec: Spec) -> list[str]:
    source = spec.data.train.source
    data = f"`{source.function}`" if source.type == "python" else f"a `{source.type}` source"
    names = spoken([f"`{name}`" for name in spec.networks])
    return [
        f"Train `{spec.name}` with your own step, `{spec.algorithm.step}`, in a custom TensorFlow training loop.",
        "",
        f"Data: {data}.",
        f"Networks: {names}; logged: {', '.join(spec.algorithm.logs)}.",
        f"Exports {spoken([f'{name}.keras' for name in spec.networks])}.",
    ]
