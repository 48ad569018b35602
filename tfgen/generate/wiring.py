"""The model's wiring, planned once: which layer (from which spec location) is applied to which
tensor, where the inputs merge, where a residual block adds its input back, which variable each
head assigns. The code emitter renders it into `build_model`'s lines (`Step.line`), and
`validate --deep` (tfgen.check.deep) walks the same steps with real Keras objects, so the model it
judges is the model the script builds, and each failure is located at its step's spec field."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tfgen.generate.code import Adapted, adapted_arguments, application_call, float32_head, keras_call, literal
from tfgen.generate.phase_plan import phase_named
from tfgen.generate.views import LayerLine, LineKind
from tfgen.spec.loader import Loc
from tfgen.spec.models import Spec
from tfgen.spec.models.applications import ApplicationSpec
from tfgen.spec.models.model import Residual

MERGE_LAYERS = {"concatenate": "Concatenate", "add": "Add", "average": "Average", "multiply": "Multiply"}


class Role(Enum):
    """What a step does (its line's kind: LINE_KINDS)."""

    ALIAS = "alias"  # `target = source`: a residual block keeping its input, or the trunk's start
    LAYER = "layer"  # `target = code(source)`: a layer item of the spec
    MERGE = "merge"  # `target = code([sources])`: the inputs' (or branches') merge
    ADD = "add"  # `target = Add()([shortcut, source])`: a residual block closing
    PREPROCESSED = "preprocessed"  # `target = preprocessed(source)`: the input the preprocessing layers give


LINE_KINDS = {
    Role.ALIAS: LineKind.ALIAS,
    Role.LAYER: LineKind.LAYER,
    Role.MERGE: LineKind.LAYER,
    Role.ADD: LineKind.ADD,
    Role.PREPROCESSED: LineKind.LAYER,
}


@dataclass(frozen=True)
class Step:
    """One line of `build_model` (see Role): assigns `target` from `sources` (variables of the
    script); a pipeline layer's step (`Wiring.pipeline`) is one entry of its layer list."""

    role: Role
    target: str
    sources: tuple[str, ...]
    loc: Loc = ()  # the spec field the step comes from (a residual's ADD: the block's)
    item: Any = None  # LAYER: the spec's layer item (None: the merge, which tfgen adds)
    code: str = ""  # LAYER: the constructor call, as the script writes it
    shortcut: str = ""  # ADD: the variable that kept the block's input

    @property
    def source(self) -> str:
        """The sources as the script's code reads them: one variable, or a list of several."""
        return self.sources[0] if len(self.sources) == 1 else f"[{', '.join(self.sources)}]"

    def line(self) -> LayerLine:
        return LayerLine(
            LINE_KINDS[self.role], target=self.target, source=self.source, code=self.code, shortcut=self.shortcut
        )


@dataclass
class Wiring:
    """The model's wiring, in the order the script applies it (a builder's model is the user's:
    only its pipeline steps are used)."""

    inputs: dict[str, str]  # input name -> its variable (`inputs['x']`)
    # `data.train.preprocess` and `augment`: each layer's step (an entry of the pipeline's layer list)
    pipeline: dict[str, list[Step]]
    preprocessed: Step | None  # the input the preprocessing layers give replaces the declared one
    branches: dict[str, list[Step]]  # branched input -> its steps, in the inputs' order
    ends: dict[str, str]  # input name -> the variable the trunk starts from (its branch's, or the input)
    start: Step  # assigns the trunk's `x`: the one input or branch, or the merge of several
    trunk: list[Step]
    heads: dict[str, list[Step]]  # output name -> its steps, the last assigning `outputs[name]`
    adapted: Adapted = field(default_factory=Adapted)

    def steps(self) -> Iterator[Step]:
        """The steps of `build_model`, in its order."""
        if self.preprocessed is not None:
            yield self.preprocessed
        for steps in self.branches.values():
            yield from steps
        yield self.start
        yield from self.trunk
        for steps in self.heads.values():
            yield from steps

    def output(self, name: str) -> str:
        return f"outputs[{literal(name)}]"


def model_wiring(spec: Spec, output_names: list[str]) -> Wiring:
    """The wiring of `spec`'s model, its heads in `output_names`' order. Adapted layers are named
    in the order the model applies them (branches, trunk, heads): one is adapted after the
    adapted layers before it. The layers of a frozen phase group carry the names `train.phases`
    finds them by (tfgen.generate.phase_plan.phase_named)."""
    model, named = spec.model, phase_named(spec).model
    mixed = spec.precision != "float32"
    adapted = Adapted()
    inputs = {name: f"inputs[{literal(name)}]" for name in model.inputs}
    branches, ends = {}, dict(inputs)
    for name in model.inputs:
        if name in model.branches:
            ends[name] = f"branches[{literal(name)}]"
            loc = ("model", "branches", name)
            wire = Wire(adapted, mixed, source=inputs[name], variable="branch", result=ends[name])
            branches[name] = wire.stack(model.branches[name], loc)
    trunk = Wire(adapted, mixed, source="x", variable="x", result="x").stack(named.layers, ("model", "layers"))
    heads = {}
    for name in output_names:
        head = list(named.outputs.get(name, []))
        if mixed and model.builder is None:
            head = float32_head(head)  # the last layer computes in float32 (losses never run in float16)
        wire = Wire(adapted, mixed, source="x", variable="h", result=f"outputs[{literal(name)}]")
        heads[name] = wire.stack(head, ("model", "outputs", name))
    pipeline, preprocessed = _pipeline(spec, inputs)
    return Wiring(inputs, pipeline, preprocessed, branches, ends, _start(spec, ends), trunk, heads, adapted)


PIPELINE = ("preprocess", "augment")  # the training pipeline's layer groups, in the order they run


def _pipeline(spec: Spec, inputs: dict[str, str]) -> tuple[dict[str, list[Step]], Step | None]:
    """The pipeline's layers, applied to the first input, and the step that makes the model's input
    what the preprocessing layers give (None: no preprocessing)."""
    train, variable = spec.data.train, next(iter(inputs.values()))
    pipeline = {
        group: [
            Step(Role.LAYER, variable, (variable,), ("data", "train", group, i), item, keras_call(item, "layers"))
            for i, item in enumerate(getattr(train, group))
        ]
        for group in PIPELINE
    }
    if not train.preprocess:
        return pipeline, None
    loc = ("data", "train", "preprocess")
    return pipeline, Step(Role.PREPROCESSED, variable, (variable,), loc, code="preprocessed")


def _start(spec: Spec, ends: dict[str, str]) -> Step:
    sources = tuple(ends.values())
    if len(sources) == 1:
        return Step(Role.ALIAS, target="x", sources=sources)
    code = f"keras.layers.{MERGE_LAYERS[spec.model.merge]}()"
    return Step(Role.MERGE, target="x", sources=sources, loc=("model", "merge"), code=code)


@dataclass
class Wire:
    """Wires a layer list from `source` through `variable` into `result`, the same way for any
    number of layers and residual blocks: the last step assigns `result` (a list with no layers
    is `result = source`, or no step when they are the same name)."""

    adapted: Adapted
    mixed: bool
    source: str
    variable: str
    result: str

    def stack(self, items: list, loc: Loc) -> list[Step]:
        steps = self._unwired(items, loc, depth=0)
        if not steps:
            return [] if self.source == self.result else [Step(Role.ALIAS, self.result, (self.source,))]
        wired, current = [], self.source
        for index, step in enumerate(steps):
            if step.role is Role.ALIAS:  # a residual block opens: keep its input
                wired.append(Step(Role.ALIAS, step.shortcut, (current,), step.loc))
                continue
            target = self.result if index == len(steps) - 1 else self.variable
            wired.append(Step(step.role, target, (current,), step.loc, step.item, step.code, step.shortcut))
            current = target
        return wired

    def _unwired(self, items: list, loc: Loc, depth: int) -> list[Step]:
        """The list's steps in order, targets and sources not yet filled."""
        steps = []
        for i, item in enumerate(items):
            if isinstance(item, Residual):
                shortcut = "shortcut" if depth == 0 else f"shortcut_{depth + 1}"
                steps.append(Step(Role.ALIAS, "", (), (*loc, i), shortcut=shortcut))
                steps += self._unwired(item.residual, (*loc, i, "residual"), depth + 1)
                steps.append(Step(Role.ADD, "", (), (*loc, i), shortcut=shortcut))
            else:
                steps.append(Step(Role.LAYER, "", (), (*loc, i), item, self._call(item)))
        return steps

    def _call(self, item: Any) -> str:
        if isinstance(item, ApplicationSpec):
            return application_call(item)
        return keras_call(item, "layers", adapted_arguments(item, self.adapted, self.mixed))
