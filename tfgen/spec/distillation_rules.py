"""What `algorithm: {type: distillation}` asks of the rest of the spec (the spec text alone; the
teacher's file is read by `validate --deep` and the script, since it may not exist yet at build)."""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec
from tfgen.spec.names import ALGORITHM_LOSS_KEYS, output_names

# The step's own per-example losses: an output of one of these names would share their history key.
STEP_LOSSES = tuple(key.removesuffix("_loss") for key in ALGORITHM_LOSS_KEYS["distillation"])


def _output_names(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """No output is named as the step's own losses (`student`, `distillation`)."""
    if spec.algorithm.type != "distillation":
        return
    where = ("model", "outputs") if spec.model.builder is None else ("targets",)
    for output in output_names(spec):
        if output in STEP_LOSSES:
            yield doc.issue(
                (*where, output),
                f"an output cannot be named `{output}` with `algorithm: distillation`: `{output}_loss` is the "
                "history's key of the step's own loss; rename the output",
                key=True,
            )


def _weighting(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`ema_ratio` moves each output's weight by its loss: the step's own losses are not outputs'."""
    if spec.algorithm.type == "distillation" and spec.loss_weighting.type == "ema_ratio":
        yield doc.issue(
            ("loss_weighting", "type"),
            "`loss_weighting: ema_ratio` is not supported with `algorithm: distillation` (use `static` or "
            "`uncertainty`)",
        )


def _class_output(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """The teacher's softened outputs are class probabilities: the student needs a class output."""
    if spec.algorithm.type == "distillation" and not any(t.class_count for t in spec.targets.values()):
        yield doc.issue(
            ("algorithm", "type"),
            "distillation needs a class output (a target with `classes`): its outputs are softened into class "
            "probabilities",
        )


DISTILLATION_CHECKS = (
    (_class_output, {"algorithm", "targets"}),
    (_output_names, {"algorithm", "model", "targets"}),
    (_weighting, {"algorithm", "loss_weighting"}),
)
