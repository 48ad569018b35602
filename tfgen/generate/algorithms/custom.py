"""The `custom` algorithm's planning: the shared parts of a script (header, data, constants) from
the supervised planner, on the spec seen as its first network's data; each network's wiring and
optimizer (gan's NetworkView), and the user's step with its declared logs (CustomView) for
templates/algorithms/custom.py.jinja."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tfgen.generate.algorithms.gan import NetworkView, _network, _with_model
from tfgen.generate.code import literal
from tfgen.generate.identity import state_sha256
from tfgen.generate.plan import make_view
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Model

TEMPLATE = "algorithms/custom.py.jinja"


@dataclass(frozen=True)
class CustomView:
    networks: list[NetworkView]  # in the spec's order; the first's inputs are the data's features
    step: str  # the user's `module:function`
    logs: list[str]  # the history's columns, as the step returns them
    clipping: str  # a literal: (kind, limit) of train.gradient_clipping, or None
    exported: str  # the files export writes, as its docstring says them


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    """The custom template, the shared view `v` (its data, constants) and the step's `c`."""
    v = make_view(_as_data_spec(spec), **where)
    header = {**v.header, "state_sha256": state_sha256(spec)}
    v = replace(v, header=header, docstring=_docstring(spec))
    return TEMPLATE, {"v": v, "c": custom_view(spec)}


def custom_view(spec: Spec) -> CustomView:
    clipping = spec.train.gradient_clipping
    kind = next((k for k in ("global_norm", "norm", "value") if clipping and getattr(clipping, k)), None)
    return CustomView(
        networks=[_network(spec, name) for name in spec.networks],
        step=spec.algorithm.step,
        logs=list(spec.algorithm.logs),
        clipping=literal((kind, getattr(clipping, kind))) if kind else "None",
        exported=_and([f"{name}.keras" for name in spec.networks]),
    )


def _as_data_spec(spec: Spec) -> Spec:
    """The spec as the supervised planner reads its data: a model of the first network's inputs
    with a bare head per target, the first network's optimizer."""
    first = next(iter(spec.networks))
    inputs = spec.networks[first].inputs
    model = Model.model_validate({"inputs": inputs, "outputs": {name: [] for name in spec.targets}})
    return _with_model(spec, model, dict(spec.targets), optimizer=spec.optimizers[first])


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _docstring(spec: Spec) -> list[str]:
    source = spec.data.train.source
    data = f"`{source.function}`" if source.type == "python" else f"a `{source.type}` source"
    names = _and([f"`{name}`" for name in spec.networks])
    return [
        f"Train `{spec.name}` with your own step, `{spec.algorithm.step}`, in a custom TensorFlow training loop.",
        "",
        f"Data: {data}.",
        f"Networks: {names}; logged: {', '.join(spec.algorithm.logs)}.",
        f"Exports {_and([f'{name}.keras' for name in spec.networks])}.",
    ]
