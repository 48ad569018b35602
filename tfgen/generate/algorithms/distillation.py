"""Planning `algorithm: {type: distillation}`: the teacher's constants, and the losses the step
logs beside the student's (templates/algorithms/distillation*.jinja lay them out)."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import DistillationView
from tfgen.spec.models import Spec
from tfgen.spec.models.algorithms import Distillation

# The top-level names a distillation script defines besides the others.
DISTILLATION_NAMES = frozenset(
    [
        "TEACHER",
        "TEMPERATURE",
        "STUDENT_LOSS_WEIGHT",
        "load_teacher",
        "teacher_inputs",
        "keyed",
        "distilled_outputs",
        "distillation_loss",
    ]
)
# The per-example losses the step adds to the outputs' (`task_losses`), each logged as `<name>_loss`.
DISTILLATION_LOSSES = ("student", "distillation")


def distillation_view(spec: Spec) -> DistillationView | None:
    algorithm = spec.algorithm
    if not isinstance(algorithm, Distillation):
        return None
    return DistillationView(
        teacher=literal(algorithm.teacher),
        temperature=literal(algorithm.temperature),
        student_loss_weight=literal(algorithm.student_loss_weight),
    )


def algorithm_losses(spec: Spec) -> tuple[str, ...]:
    """The per-example losses the spec's algorithm adds to the outputs' (none: supervised)."""
    return DISTILLATION_LOSSES if isinstance(spec.algorithm, Distillation) else ()


def setting_lines(view: DistillationView | None) -> list[str]:
    """The script's constants of the distillation (none without it)."""
    if view is None:
        return []
    return [
        "# The teacher (frozen) and how its outputs are softened and weighed against the targets.",
        f"TEACHER = {view.teacher}",
        f"TEMPERATURE = {view.temperature}",
        f"STUDENT_LOSS_WEIGHT = {view.student_loss_weight}",
    ]
