"""What `validate --deep` checks of `algorithm: {type: distillation}`: the teacher's file, where
it exists, loads and its outputs fit the student's (the script's own rule: the student's class outputs
named as the teacher's, or the one output of each, of the same shapes). A teacher still to be
trained (another spec's run) is no problem here: the script says so when it starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfgen.spec.loader import Loc
from tfgen.spec.models import Spec

TEACHER: Loc = ("algorithm", "teacher")


def teacher_problems(spec: Spec, keras: Any, student: Any) -> list[tuple[Loc, str]]:
    """(location, message) of a teacher file that cannot be loaded or does not fit `student`."""
    path = Path(getattr(spec.algorithm, "teacher", ""))
    if spec.algorithm.type != "distillation" or student is None or not path.is_file():
        return []
    try:
        teacher = keras.saving.load_model(path, compile=False)
    except Exception as error:
        return [(TEACHER, f"the teacher model file {path} cannot be loaded: {first_line(error)}")]
    try:
        inputs = student.input  # a Sequential teacher takes the student's one input as a tensor
        one = isinstance(teacher, keras.Sequential) and len(inputs) == 1
        taught = teacher(next(iter(inputs.values())) if one else inputs)
    except Exception as error:
        return [(TEACHER, f"the teacher {path} does not take the student's inputs: {first_line(error)}")]
    learned = {k: tuple(t.shape) for k, t in student.output.items() if spec.targets[k].class_count}
    if not isinstance(taught, dict):
        taught = {next(iter(learned)) if len(learned) == 1 else "output": taught}
    shapes = {k: tuple(t.shape) for k, t in taught.items()}
    shared = [k for k in learned if k in shapes]
    if not shared or any(shapes[k] != learned[k] for k in shared):
        fit = "(distilled: outputs of the same names and shapes)"
        return [(TEACHER, f"the teacher's outputs {shapes} do not fit the student's {learned} {fit}")]
    return []


def first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
