"""Planning the model's code: the ModelView the model template lays out, its lines rendered from
the model's wiring (tfgen.generate.wiring, which `validate --deep` walks too)."""

from __future__ import annotations

from tfgen.generate.code import KEPT_OUTSIDE, keywords
from tfgen.generate.views import BranchView, ModelView, OutputView
from tfgen.generate.wiring import Wiring
from tfgen.spec.models import Spec
from tfgen.spec.support import may_add_losses, model_layers


def branch_views(wiring: Wiring) -> list[BranchView]:
    """Each branched input's lines, in the inputs' order."""
    return [BranchView(input=name, lines=[step.line() for step in steps]) for name, steps in wiring.branches.items()]


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


def model_view(spec: Spec, wiring: Wiring, outputs: list[OutputView], added_losses: tuple[str, ...] = ()) -> ModelView:
    """`added_losses`: the per-example losses the algorithm's step adds to the outputs' (logged too)."""
    types = {item.type for item in model_layers(spec) if getattr(item, "adapt_batches", None)}
    kept_outside = {t: dtype for t, dtype in KEPT_OUTSIDE.items() if t in types}
    adapted = wiring.adapted
    return ModelView(
        builder=spec.model.builder,
        builder_kwargs=keywords(spec.model.kwargs),
        branches=branch_views(wiring),
        start=wiring.start.line(),
        preprocessed=wiring.preprocessed.line() if wiring.preprocessed else None,
        merge_comment=_merge_comment(spec) if len(spec.model.inputs) > 1 else None,
        trunk=[step.line() for step in wiring.trunk],
        outputs=outputs,
        adapted=adapted.batches,
        vocabulary_copies=adapted.copies,
        kept_outside=kept_outside,
        adapts_strings="string" in kept_outside.values(),
        several_outputs=len(outputs) > 1,
        logged_apart=[] if len(outputs) > 1 else [(f"{name}_loss", name) for name in added_losses],
        loss_keys=[o.loss_key for o in outputs if len(outputs) > 1] + [f"{name}_loss" for name in added_losses],
        averaged_outputs=[output for output in outputs if output.mean_per_example],
        layer_losses=may_add_losses(spec),
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
