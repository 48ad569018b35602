"""Names the generated run will log, derived from the spec (shared by validation and planning)."""

from __future__ import annotations

from tfgen.spec import catalog
from tfgen.spec.custom_objects import class_name, is_custom, snake_case
from tfgen.spec.models import KerasObject, Spec

# The keys every history row may hold besides the losses and metrics, with what they record
# (written by the support module's `epoch_values` and the epoch loop).
FIXED_KEYS = {
    "epoch": "the epoch number",
    "lr": "the learning rate",
    "loss_scale": "the mixed-precision loss scale",
    "skipped_steps": "the count of skipped updates",
    "epoch_seconds": "the epoch's duration",
    "examples_per_second": "the training speed",
    "input_wait": "the fraction of an input-bound epoch the steps waited for input (streamed data)",
}
# Validation values are the training keys with this prefix (`val_loss`, `val_<output>_loss`, ...).
VALIDATION_PREFIX = "val_"


def output_names(spec: Spec) -> list[str]:
    """The model's outputs: its heads, or for a `builder` model the targets."""
    return list(spec.model.outputs) if spec.model.builder is None else list(spec.targets)


def metric_name(metric: KerasObject) -> str:
    """The metric's own name, as Keras gives it (its `name` argument or the class default;
    your own class's name in snake case)."""
    if "name" in metric.args:
        return str(metric.args["name"])
    if is_custom(metric.type):
        return snake_case(class_name(metric.type))
    return catalog.classes("metrics")[metric.type]["default_name"]


def metric_key(output: str, metric: KerasObject, several: bool) -> str:
    """A metric's history key: `<output>_<name>` when the model has several outputs, else its name."""
    name = metric_name(metric)
    return f"{output}_{name}" if several else name


def metric_keys(spec: Spec) -> list[tuple[str, str, KerasObject]]:
    """(output, history key, metric) for every metric; keys as Keras fit names them."""
    several = len(output_names(spec)) > 1
    return [
        (output, metric_key(output, metric, several), metric)
        for output, metrics in spec.metrics.items()
        for metric in metrics
    ]


# The per-example losses an algorithm's step logs beside the outputs' (history key -> what it is).
ALGORITHM_LOSS_KEYS = {
    "distillation": {
        "student_loss": "the student's losses against the targets",
        "distillation_loss": "the distillation's KL term",
    },
}


def algorithm_keys(spec: Spec) -> dict[str, str]:
    """The history keys the spec's algorithm adds beside the outputs' losses, and what each is."""
    return ALGORITHM_LOSS_KEYS.get(spec.algorithm.type, {})


def train_keys(spec: Spec) -> list[str]:
    """The per-epoch training values: `loss`, per-output losses when several, the algorithm's
    losses, then metrics."""
    outputs = output_names(spec)
    keys = ["loss"]
    if len(outputs) > 1:
        keys += [f"{output}_loss" for output in outputs]
    return keys + list(algorithm_keys(spec)) + [key for _, key, _ in metric_keys(spec)]


def weight_keys(spec: Spec) -> list[str]:
    """`<output>_loss_weight` per output when the weights change during training."""
    if spec.loss_weighting.type == "static":
        return []
    return [f"{output}_loss_weight" for output in output_names(spec)]


def has_validation(spec: Spec) -> bool:
    return spec.data.validation is not None or spec.data.validation_split is not None


def has_test(spec: Spec) -> bool:
    """The run evaluates its final model on test data (`data.test` or `data.test_split`)."""
    return spec.data.test is not None or spec.data.test_split is not None


def history_keys(spec: Spec) -> list[str]:
    """Every value a history row holds besides `epoch`, `lr`, and timing."""
    keys = train_keys(spec)
    if has_validation(spec):
        keys += [f"{VALIDATION_PREFIX}{key}" for key in keys]
    return keys + weight_keys(spec)
