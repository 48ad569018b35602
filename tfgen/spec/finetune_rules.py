"""Layer names and `train.phases`: every name a layer item gives is unique in the model, and
each phase's `frozen` names something; the phases cover `train.epochs` exactly."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec import catalog
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec
from tfgen.spec.models.applications import ApplicationSpec
from tfgen.spec.models.model import Residual
from tfgen.spec.models.phases import TRUNK


def item_name(item: Any) -> str | None:
    """The name a layer item gives its layer (None: Keras names it)."""
    if isinstance(item, ApplicationSpec):
        return item.name
    if isinstance(item, Residual):
        return None
    name = item.args.get("name")
    return name if isinstance(name, str) else None


def located_items(items: list, loc: Loc) -> Iterator[tuple[Loc, Any]]:
    """(location, item) of a layer list's items, residual blocks opened."""
    for i, item in enumerate(items):
        if isinstance(item, Residual):
            yield from located_items(item.residual, (*loc, i, "residual"))
        else:
            yield (*loc, i), item


def model_items(spec: Spec) -> Iterator[tuple[Loc, Any]]:
    """(location, item) of the model's layer items: branches, trunk, heads."""
    model = spec.model
    for name, items in model.branches.items():
        yield from located_items(items, ("model", "branches", name))
    yield from located_items(model.layers, ("model", "layers"))
    for name, items in model.outputs.items():
        yield from located_items(items, ("model", "outputs", name))


def layer_names(spec: Spec) -> list[str]:
    """The names the model's layer items give, in order."""
    return [name for _, item in model_items(spec) if (name := item_name(item)) is not None]


def name_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """A layer name given twice, or also an input's (Keras needs every layer's name unique)."""
    seen: dict[str, Loc] = {name: ("model", "inputs", name) for name in spec.model.inputs}
    reserved = {TRUNK, *spec.model.outputs} if spec.train.phases else set()
    frozen = {group for phase in spec.train.phases or [] for group in phase.frozen} & reserved
    for loc, item in model_items(spec):
        name = item_name(item)
        if name is None:
            continue
        where = (*loc, "name")
        if name in seen:
            yield doc.issue(where, f"the layer name `{name}` is already taken (at {'.'.join(map(str, seen[name]))})")
        elif name in reserved:
            what = "the shared layers" if name == TRUNK else f"the head of output `{name}`"
            yield doc.issue(where, f"`{name}` names {what} in `train.phases`: give this layer another name")
        elif (group := _numbered_group(name, frozen)) is not None:
            yield doc.issue(
                where,
                f"`{name}` is the name `train.phases` gives an unnamed layer of `{group}` "
                "(`<group>_<n>`): give this layer another name",
            )
        seen[name] = loc


def _numbered_group(name: str, groups: set[str]) -> str | None:
    """The frozen group whose unnamed layers the script names like `name` (`trunk_2`, `<output>_1`)."""
    found = re.fullmatch(r"(.+)_[0-9]+", name)
    return found.group(1) if found and found.group(1) in groups else None


def phase_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Phases that do not cover `train.epochs`, and `frozen` names that name nothing."""
    phases = spec.train.phases
    if not phases:
        return
    covered = sum(phase.epochs for phase in phases)
    if covered != spec.train.epochs:
        yield doc.issue(
            ("train", "phases"),
            f"the phases cover {covered} epochs but `train.epochs` is {spec.train.epochs}: they must cover it exactly",
        )
    if spec.model.builder is not None:
        return  # a builder's layer names are known when the script builds it
    known = list(dict.fromkeys([*layer_names(spec), TRUNK, *spec.model.outputs]))
    for i, phase in enumerate(phases):
        for j, name in enumerate(phase.frozen):
            if name not in known:
                hint = (
                    catalog.did_you_mean(name, known) or f" (layer names, `{TRUNK}` or an output: {', '.join(known)})"
                )
                yield doc.issue(("train", "phases", i, "frozen", j), f"`{name}` names no layer item{hint}")


def frozen_items(spec: Spec, frozen: list[str]) -> set[Loc]:
    """The locations of the layer items a phase freezing `frozen` leaves untrained (with the
    items frozen for the whole run, `trainable: false`)."""
    found = set()
    for loc, item in model_items(spec):
        group = TRUNK if loc[1] == "layers" else loc[2] if loc[1] == "outputs" else None
        trainable = item.trainable if isinstance(item, ApplicationSpec) else item.args.get("trainable", True)
        if group in frozen or item_name(item) in frozen or trainable is False:
            found.add(loc)
    return found


def trains_nothing(spec: Spec, index: int) -> str:
    """Why phase `index` cannot run (the script's PhasePlan.trains_nothing says the same)."""
    first = sum(phase.epochs for phase in spec.train.phases[:index]) + 1
    last = first + spec.train.phases[index].epochs - 1
    epochs = f"epoch {first}" if first == last else f"epochs {first}-{last}"
    return f"the phase freezes every layer that has weights, so {epochs} would train nothing: leave some layer out of `frozen`"


def all_frozen_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """A phase that freezes every layer item (`--deep` and the script also refuse one that
    leaves only layers without weights, such as Dropout)."""
    if spec.model.builder is not None:
        return
    items = {loc for loc, _ in model_items(spec)}
    for i, phase in enumerate(spec.train.phases):
        if items and items <= frozen_items(spec, phase.frozen):
            yield doc.issue(("train", "phases", i, "frozen"), trains_nothing(spec, i))


def finetune_issues(spec: Spec, doc: Located, valid: set[str]) -> Iterator[SpecIssue]:
    """Name and phase issues of the sections that validated."""
    if "model" in valid and "train" in valid:
        yield from name_issues(spec, doc)
        yield from phase_issues(spec, doc)
        yield from all_frozen_issues(spec, doc)
