"""The script's `predict` and `evaluate` commands: whether it has them, how it reads new data
(its training source's read call on another path), which pipeline batches it, and which class
targets' outputs are logits."""

from __future__ import annotations

from dataclasses import replace

from tfgen.generate.code import literal
from tfgen.generate.source_plan import unit_plan
from tfgen.generate.views import LossTotal, Part, PredictView, View
from tfgen.spec.models import Spec
from tfgen.spec.names import has_test, has_validation

# The source types new data is read as: what their read call takes from the command line
# (`path`: a file or folder; python: a `module:function` reference, called without the spec's
# arguments), and what it adds: a CSV read whole (its row numbers are the ids), a folder's
# files without class folders to predict on, an .npz without its target arrays.
NEW_DATA = {
    "csv": ({"path": "path"}, ", stream=False, labelled=labelled"),
    "image_folder": ({"path": "path"}, ", labelled=labelled"),
    "text_folder": ({"path": "path"}, ", labelled=labelled"),
    "npz": ({"path": "path"}, ", labelled=labelled"),
    "python": ({"call": "path", "kwargs": None}, ""),
}
# What `path` is, when it is not a file or folder.
PATH_NOTES = {"python": " (here: a `module:function`)"}
READ_TYPES = ", ".join(list(NEW_DATA)[:-1]) + f" or {list(NEW_DATA)[-1]}"


def predict_view(spec: Spec, view: View) -> PredictView | None:
    """The commands' view; None when the script has no single model to run on new data as
    its validation step does (another algorithm, preprocessing outside the model, learned
    loss weights) or no pipeline that batches data in order (no validation or test data)."""
    if spec.algorithm.type != "supervised" or spec.data.train.preprocess:
        return None
    if view.step.loss_total is LossTotal.LEARNED:
        return None
    pipeline = "validation_pipeline" if has_validation(spec) else "test_pipeline" if has_test(spec) else None
    if pipeline is None:
        return None
    source = spec.data.train.source
    return PredictView(
        read_call=_new_data_call(spec, source),
        refusal=f"predict and evaluate read {READ_TYPES} data; this script trains on {source.type} data",
        path_note=PATH_NOTES.get(source.type, ""),
        pipeline=pipeline,
        logits=literal(tuple(name for name in spec.targets if _logits(spec, name))),
        total=", total=total_loss" if view.step.loss_total is LossTotal.WEIGHTED else "",
    )


def _new_data_call(spec: Spec, source) -> str | None:
    """The training source's read call on `path` and `targets` (None: new data is not read as its type)."""
    if source.type not in NEW_DATA:
        return None
    plan = unit_plan(source.type)
    given, added = NEW_DATA[source.type]
    call = plan.read_call(replace(plan.view(source, Part.VALIDATION, spec), **given), "")
    # The targets with the run's class names: a folder of an unknown class is refused.
    call = call.replace(", TARGETS", ", targets", 1)
    return call.removesuffix(")") + added + ")"


def _logits(spec: Spec, name: str) -> bool:
    """Whether target `name` is a class target whose loss takes logits."""
    loss = spec.losses.get(name)
    return bool(spec.targets[name].classes) and loss is not None and bool(loss.args.get("from_logits"))
