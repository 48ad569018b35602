"""The script's top-level constants: the spec's numbers its code reads by name, each defined only
when the script uses it, in the order the script lists them (before INPUTS and after TARGETS)."""

from __future__ import annotations

from tfgen.generate.algorithms import distillation
from tfgen.generate.code import literal
from tfgen.generate.views import View


def _used(entries: list[tuple[object, list[str]]]) -> list[str]:
    """The lines of the entries whose first item is set."""
    return [line for used, lines in entries for line in lines if used]


def option_lines(v: View) -> list[str]:
    """OUTPUT_DIR, EPOCHS (and CPU_REPLICAS): the options' defaults, defined before TensorFlow is
    imported, as the options are read then (`--help` answers without it)."""
    d = v.distribution
    return _used(
        [
            (True, [f"OUTPUT_DIR = {v.output_dir}", f"EPOCHS = {v.epochs}"]),
            (
                d.cpu_replicas,
                [f"CPU_REPLICAS = {d.cpu_replicas}  # logical CPU devices to mirror over (a testing aid)"],
            ),
        ]
    )


def parse_arguments(v: View) -> str:
    """`rt.parse_args`'s arguments after `argv`: the script's docstring and options' defaults."""
    arguments = ["__doc__", "EPOCHS", "OUTPUT_DIR"]
    if v.distribution.cpu_replicas:
        arguments.append("cpu_replicas=CPU_REPLICAS")
    if v.predict:
        arguments.append("predicts=True")
    return ", ".join(arguments)


def setting_lines(v: View) -> list[str]:
    """From SPEC_DIR to STEPS_PER_EXECUTION: where the script is, and the batches it makes."""
    d, s = v.data, v.step
    examples = "GLOBAL_BATCH_SIZE * ACCUMULATION_STEPS" if s.accumulates else "GLOBAL_BATCH_SIZE"
    return _used(
        [
            (
                v.spec_dir,
                [f"SPEC_DIR = Path(__file__).resolve().parent / {v.spec_dir}  # user modules: see rt.function"],
            ),
            (True, [f"GLOBAL_BATCH_SIZE = {d.batch_size}"]),
            (d.has_validation, [f"VALIDATION_BATCH_SIZE = {d.validation_batch_size}"]),
            (d.shuffle, [f"SHUFFLE_BUFFER = {d.shuffle}"]),
            (d.split, [f"VALIDATION_SPLIT = {d.split}"]),
            (d.test_split, [f"TEST_SPLIT = {d.test_split}"]),
            (d.has_test, [f"TEST_BATCH_SIZE = {d.test_batch_size}"]),
            (s.accumulates, [f"ACCUMULATION_STEPS = {s.accumulation}"]),
            (True, [f"EXAMPLES_PER_UPDATE = {examples}"]),
            (s.steps_per_execution, [f"STEPS_PER_EXECUTION = {s.steps_per_execution}"]),
        ]
    )


def run_setting_lines(v: View) -> list[str]:
    """From SYNTHETIC_TRAIN_EXAMPLES to PROFILE_STEPS: what a run draws, adapts, weighs, saves and logs."""
    d, c, log = v.data, v.checkpoint, v.logging
    return _used(
        [
            (True, [f"SYNTHETIC_TRAIN_EXAMPLES = {d.synthetic_train}"]),
            (d.validation, [f"SYNTHETIC_VALIDATION_EXAMPLES = {d.synthetic_validation}"]),
            (d.test, [f"SYNTHETIC_TEST_EXAMPLES = {d.synthetic_test}"]),
            (v.model.adapted, _adapted(v)),
            (d.validation_steps, [f"VALIDATION_STEPS = {d.validation_steps}"]),
            (log.validation_every, [f"VALIDATION_EVERY = {log.validation_every}"]),
            (v.step.weights, [f"LOSS_WEIGHTS = {v.step.weights}"]),
            (v.weights.class_weights, _class_weights(v)),
            (v.step.clipping, _clip_limit(v)),
            (v.step.sharpness_aware, [f"SHARPNESS_RHO = {v.step.sharpness_aware}  # SAM: the ascent's radius"]),
            (c.every_steps, [f"CHECKPOINT_EVERY_STEPS = {c.every_steps}"]),
            (c.every_epochs and not c.every_steps, [f"CHECKPOINT_EVERY_EPOCHS = {c.every_epochs}"]),
            (True, [f"CHECKPOINTS_TO_KEEP = {c.keep}"]),
            (v.phases, _phases(v)),
            (v.distillation, distillation.setting_lines(v.distillation)),
            *_distribution(v),
            (log.tensorboard, [f"LOG_EVERY_STEPS = {log.every_steps}"]),
            (log.profile, _profile(v)),
        ]
    )


def _adapted(v: View) -> list[str]:
    return [
        "# Adapted layers: how many training batches each one's statistics are computed on.",
        f"ADAPT_BATCHES = {literal(v.model.adapted)}",
    ]


def _class_weights(v: View) -> list[str]:
    return [
        "# Each class's weight in its output's loss (balanced: counted once on the training labels).",
        f"CLASS_WEIGHTS = {v.weights.class_weights}",
    ]


def _clip_limit(v: View) -> list[str]:
    clipping = v.step.clipping
    return [f"CLIP_LIMIT = {clipping.limit}  # {clipping.kind.value}"] if clipping else []


def _phases(v: View) -> list[str]:
    phases = v.phases.phases if v.phases else []
    return [
        "# The training phases in order: their epochs, the layers they freeze, their rate factor.",
        "PHASES = [",
        *(f"    {phase}," for phase in phases),
        "]",
    ]


def _distribution(v: View) -> list[tuple[object, list[str]]]:
    d = v.distribution
    return [
        (d.timeout, [f"COLLECTIVE_TIMEOUT_SECONDS = {d.timeout}  # a collective waiting longer for a peer fails"]),
    ]


def _profile(v: View) -> list[str]:
    profile = v.logging.profile
    return [f"PROFILE_START_STEP = {profile.start_step}", f"PROFILE_STEPS = {profile.steps}"] if profile else []
