"""Planning `train.phases`: the script's PHASES (each phase's Keras layer names and rate factor),
and the names a phased spec gives the unnamed layers of the groups it freezes (`trunk`, a head),
so that the script finds them by name."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import PhaseView
from tfgen.spec.finetune_rules import item_name, located_items
from tfgen.spec.models import Spec
from tfgen.spec.models.applications import ApplicationSpec
from tfgen.spec.models.model import Residual
from tfgen.spec.models.phases import TRUNK

PHASE_NAMES = frozenset({"PHASES", "ScaledByPhase"})  # the script's top-level names for phases


def frozen_groups(spec: Spec) -> set[str]:
    """The groups (`trunk`, output names) that some phase freezes."""
    groups = {TRUNK, *spec.model.outputs}
    return {name for phase in spec.train.phases for name in phase.frozen if name in groups}


def _named(items: list, group: str, counter: list[int]) -> list:
    """The items with every unnamed layer named `<group>_<n>` (n counts the group's layers)."""
    named = []
    for item in items:
        if isinstance(item, Residual):
            named.append(item.model_copy(update={"residual": _named(item.residual, group, counter)}))
            continue
        counter[0] += 1
        if item_name(item) is not None:
            named.append(item)
        elif isinstance(item, ApplicationSpec):
            named.append(item.model_copy(update={"name": f"{group}_{counter[0]}"}))
        else:
            named.append(item.model_copy(update={"args": {**item.args, "name": f"{group}_{counter[0]}"}}))
    return named


def phase_named(spec: Spec) -> Spec:
    """The spec with the unnamed layers of each frozen group named (unchanged without phases)."""
    groups = frozen_groups(spec)
    if not groups:
        return spec
    model = spec.model
    layers = _named(list(model.layers), TRUNK, [0]) if TRUNK in groups else model.layers
    outputs = {name: _named(list(head), name, [0]) if name in groups else head for name, head in model.outputs.items()}
    return spec.model_copy(update={"model": model.model_copy(update={"layers": layers, "outputs": outputs})})


def _group_names(spec: Spec, group: str) -> list[str]:
    """The Keras layer names a `frozen` entry stands for."""
    model = spec.model
    if group == TRUNK:
        items = located_items(list(model.layers), ())
    elif group in model.outputs:
        items = located_items(list(model.outputs[group]), ())
    else:
        return [group]
    return [name for _, item in items if (name := item_name(item)) is not None]


def phase_view(spec: Spec) -> PhaseView | None:
    if not spec.train.phases:
        return None
    named = phase_named(spec)
    phases = []
    for phase in spec.train.phases:
        layers = list(dict.fromkeys(n for group in phase.frozen for n in _group_names(named, group)))
        phases.append(
            f"rt.Phase(epochs={phase.epochs}, frozen={literal(tuple(layers))}, "
            f"learning_rate_factor={literal(phase.learning_rate_factor)})"
        )
    return PhaseView(phases=phases, rate_factor=rate_factors(spec))


def rate_factors(spec: Spec) -> bool:
    """Whether some phase scales the rate."""
    return any(phase.learning_rate_factor != 1.0 for phase in spec.train.phases)
