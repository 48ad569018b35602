"""Planning the model's code: each input's branch, their merge into the trunk, and the
ModelView the model template lays out (the trunk's and heads' lines come from tfgen.generate.code)."""

from __future__ import annotations

from tfgen.generate.code import KEPT_OUTSIDE, Adapted, keywords, layer_lines, literal
from tfgen.generate.views import BranchView, LayerLine, LineKind, ModelView, OutputView
from tfgen.spec.models import Spec
from tfgen.spec.support import model_layers


def branch_views(spec: Spec, adapted: Adapted, mixed: bool) -> list[BranchView]:
    """Each branched input's layers, in the inputs' order."""
    views = []
    for name in spec.model.inputs:
        if name in spec.model.branches:
            source, result = f"inputs[{literal(name)}]", f"branches[{literal(name)}]"
            lines = layer_lines(
                spec.model.branches[name], adapted, mixed, source=source, variable="branch", result=result
            )
            views.append(BranchView(input=name, lines=lines))
    return views


MERGE_LAYERS = {"concatenate": "Concatenate", "add": "Add", "average": "Average", "multiply": "Multiply"}


def _start(spec: Spec) -> tuple[LayerLine, str | None]:
    """The line that gives the trunk its `x` (an input, a branch, or their merge), and the
    comment of a merge."""
    model = spec.model
    sources = [f"{'branches' if name in model.branches else 'inputs'}[{literal(name)}]" for name in model.inputs]
    if len(sources) == 1:
        return LayerLine(LineKind.ALIAS, target="x", source=sources[0]), None
    merge = LayerLine(
        LineKind.LAYER, target="x", source=f"[{', '.join(sources)}]", code=f"keras.layers.{MERGE_LAYERS[model.merge]}()"
    )
    return merge, _merge_comment(spec)


MERGE_WORDS = {
    "concatenate": "concatenated on the last axis",
    "add": "added",
    "average": "averaged",
    "multiply": "multiplied",
}


def _merge_comment(spec: Spec) -> str:
    """What the merge line joins, and how."""
    model = spec.model
    how = MERGE_WORDS[model.merge]
    as_given = [f"`{name}`" for name in model.inputs if name not in model.branches]
    if not model.branches:
        return f"The inputs as given, {how}"
    if not as_given:
        return f"The branches' outputs, {how}"
    return f"The branches' outputs and {', '.join(as_given)} as given, {how}"


def model_view(
    spec: Spec, branches: list[BranchView], trunk: list[LayerLine], outputs: list[OutputView], adapted: Adapted
) -> ModelView:
    types = {item.type for item in model_layers(spec) if getattr(item, "adapt_batches", None)}
    kept_outside = {t: dtype for t, dtype in KEPT_OUTSIDE.items() if t in types}
    start, merge_comment = _start(spec)
    return ModelView(
        builder=spec.model.builder,
        builder_kwargs=keywords(spec.model.kwargs),
        branches=branches,
        start=start,
        merge_comment=merge_comment,
        trunk=trunk,
        outputs=outputs,
        adapted=adapted.batches,
        vocabulary_copies=adapted.copies,
        kept_outside=kept_outside,
        adapts_strings="string" in kept_outside.values(),
        several_outputs=len(outputs) > 1,
        averaged_outputs=[output for output in outputs if output.mean_per_example],
    )


def model_words(spec: Spec) -> str:
    """The model in the script's docstring: its builder, or its branches, merge and trunk."""
    model = spec.model
    if model.builder:
        return f"built by `{model.builder}`"
    trunk = f"{len(model.layers)} shared layers"
    branched = ", ".join(f"`{name}`" for name in model.inputs if name in model.branches)
    if len(model.inputs) > 1:
        merged = f"{len(model.inputs)} inputs merged by {model.merge}"
        return f"{merged} (branches: {branched}), then {trunk}" if branched else f"{merged}, then {trunk}"
    return f"a branch on {branched}, then {trunk}" if branched else trunk
