"""Checks that span several sections of a structurally valid spec."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.sources import located_sources, unit_of
from tfgen.spec import catalog
from tfgen.spec.branch_rules import BRANCH_CHECKS
from tfgen.spec.distillation_rules import DISTILLATION_CHECKS
from tfgen.spec.finetune_rules import located_items, model_items
from tfgen.spec.loader import Loc, Located, walk
from tfgen.spec.models import Spec
from tfgen.spec.names import (
    FIXED_KEYS,
    VALIDATION_PREFIX,
    algorithm_keys,
    has_validation,
    history_keys,
    metric_key,
    output_names,
)
from tfgen.spec.script_rules import SCRIPT_CHECKS
from tfgen.spec.string_rules import STRING_CHECKS
from tfgen.spec.support import (
    ADAPTABLE,
    INTEGER_ADAPTED,
    JIT_STRATEGIES,
    VOCABULARY_ADAPTED,
    in_memory_blocker,
    may_add_losses,
    string_inputs,
    xla_lookups,
)
from tfgen.spec.weight_rules import WEIGHT_CHECKS

INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
NEEDS_STRINGS = {  # adaptable layers that read strings: a model without a string input has none
    "StringLookup": "looks up strings",
    "TextVectorization": "reads strings",
}


def cross_check(spec: Spec, doc: Located, valid: set[str] | None = None) -> Iterator[SpecIssue]:
    """Run every check whose sections are valid (`valid`: the section names; None: all)."""
    for check, needs in CHECKS:
        if valid is None or needs <= valid:
            yield from check(spec, doc)


def _outputs(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    outputs = output_names(spec)
    where = ("model", "outputs") if spec.model.builder is None else ("targets",)
    for output in outputs:
        if output not in spec.targets:
            yield doc.issue((*where, output), f"output `{output}` has no entry in `targets`", key=True)
        if output not in spec.losses:
            yield doc.issue((*where, output), f"output `{output}` has no entry in `losses`", key=True)
    for section in ("targets", "losses", "metrics"):
        for name in getattr(spec, section):
            if name not in outputs:
                yield doc.issue(
                    (section, name),
                    f"`{name}` is not an output of the model{catalog.did_you_mean(name, outputs)} "
                    f"(outputs: {', '.join(outputs)})",
                    key=True,
                )


def _history(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Each history key is written by one thing: a metric or an output never takes another's key
    (or a fixed one), and only validation values start with `val_` (see `names.history_keys`)."""
    outputs = output_names(spec)
    where = ("model", "outputs") if spec.model.builder is None else ("targets",)
    several = len(outputs) > 1
    taken = {**FIXED_KEYS, "loss": "the total loss", **algorithm_keys(spec)}  # key -> what writes it
    for output in outputs:
        if output.startswith(VALIDATION_PREFIX):
            yield doc.issue(
                (*where, output),
                f"an output name cannot start with `{VALIDATION_PREFIX}`, the prefix of the history's validation "
                f"values (`{output}_loss` would read as the validation loss of `{output[len(VALIDATION_PREFIX) :]}`)",
                key=True,
            )
            continue
        if several:  # distinct outputs never share these keys, nor do they meet the fixed ones
            taken[f"{output}_loss"] = f"the loss of output `{output}`"
        if spec.loss_weighting.type != "static":
            taken[f"{output}_loss_weight"] = f"the loss weight of output `{output}`"
    for output, metrics in spec.metrics.items():
        if output not in outputs or output.startswith(VALIDATION_PREFIX):
            continue  # reported above or by `_outputs`
        for i, metric in enumerate(metrics):
            named = "name" in metric.args
            loc = ("metrics", output, i, "name") if named else ("metrics", output, i)
            key = metric_key(output, metric, several)
            fix = "rename the metric" if named else "give the metric a `name`"
            if key.startswith(VALIDATION_PREFIX):
                yield doc.issue(
                    loc,
                    f"the metric's history key `{key}` starts with `{VALIDATION_PREFIX}`, the prefix of validation values; {fix}",
                )
            elif key in taken:
                yield doc.issue(loc, f"the metric's history key `{key}` is already {taken[key]}; {fix}")
            else:
                taken[key] = f"the key of metrics.{output}.{i}"


def _model(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    model = spec.model
    if model.builder is None and not model.branches and not model.layers and not any(model.outputs.values()):
        yield doc.issue(
            ("model", "outputs"),
            "the model has no layers (the trunk and every head are empty): it has no weights to train",
        )
    train = spec.data.train
    if len(spec.model.inputs) > 1:
        for field in ("preprocess", "augment"):
            if getattr(train, field):
                yield doc.issue(
                    ("data", "train", field), f"`{field}` layers apply to a single input; this model has several"
                )


def _adapt(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`adapt` only where the statistics end up in the model's variables (and so its checkpoints)."""
    supported = f"`adapt` is supported on: {', '.join(ADAPTABLE)}"
    for field in ("preprocess", "augment"):
        for loc, layer in located_items(getattr(spec.data.train, field), ("data", "train", field)):
            if layer.adapt_batches:
                yield doc.issue(
                    (*loc, "adapt"),
                    f"an adapted layer belongs in `model.layers`, where its statistics "
                    f"are saved with the model and its checkpoints (`{field}` layers are not)",
                    key=True,
                )
    numeric = not string_inputs(spec) and spec.model.builder is None
    for loc, layer in model_items(spec):
        if layer.adapt_batches and layer.type in NEEDS_STRINGS and numeric:
            why = f"`{layer.type}` {NEEDS_STRINGS[layer.type]}, but the model's inputs are numeric"
            yield doc.issue((*loc, "adapt"), f"{why}: declare a `dtype: string` input", key=True)
        elif layer.adapt_batches and layer.type in ADAPTABLE:
            yield from _adapted_layer(spec, doc, loc, layer)
        elif layer.adapt_batches:
            why = f"`{layer.type}` has no statistics to adapt"
            yield doc.issue((*loc, "adapt"), f"{why}; {supported}", key=True)


def _adapted_layer(spec: Spec, doc: Located, loc: Loc, layer: Any) -> Iterator[SpecIssue]:
    given = ADAPTABLE[layer.type]
    if set(given) & set(layer.args):
        names = " and ".join(f"`{arg}`" for arg in given)
        yield doc.issue(
            (*loc, "adapt"),
            f"`adapt` computes {names}: give {'them' if len(given) > 1 else 'it'} or `adapt`, not both",
            key=True,
        )
    elif layer.type == "Discretization" and layer.args.get("num_bins") is None:
        yield doc.issue((*loc, "adapt"), "an adapted `Discretization` needs `num_bins`", key=True)
    mode = layer.args.get("output_mode", "int")
    if layer.type in VOCABULARY_ADAPTED and mode == "tf_idf":
        yield doc.issue(
            (*loc, "output_mode"),
            f"an adapted `{layer.type}` cannot use `tf_idf` (its weights are not kept in the checkpoint)",
        )
    elif layer.type in VOCABULARY_ADAPTED and layer.args.get("pad_to_max_tokens") and not layer.args.get("max_tokens"):
        yield doc.issue(
            (*loc, "pad_to_max_tokens"),
            "`pad_to_max_tokens` pads to `max_tokens`: give it, or remove `pad_to_max_tokens` (the width is "
            "then the adapted vocabulary's size)",
        )
    not_float32 = layer.args.get("dtype", "float32") != "float32"
    if layer.type not in INTEGER_ADAPTED and spec.precision != "float32" and not_float32:
        yield doc.issue(
            (*loc, "dtype"),
            f"under `{spec.precision}` an adapted layer computes in float32 (Keras's "
            "`adapt` fails in float16); remove `dtype` and tfgen sets it",
        )


def _source_rules(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Each source's static rules, by its registered unit (tfgen/sources/<type>/rules.py); an issue
    two sources both raise (a training and a validation folder) is said once."""
    seen: set[tuple] = set()
    for loc, source in located_sources(spec):
        rules = unit_of(source).rules
        for issue in rules(spec, doc, loc, source) if rules else ():
            if (issue.field, issue.message) not in seen:
                seen.add((issue.field, issue.message))
                yield issue


def _stratify(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    if not spec.data.stratify:
        return
    targets = list(spec.targets.values())
    if len(targets) != 1 or targets[0].shape or not targets[0].class_count:
        yield doc.issue(
            ("data", "stratify"), "`stratify` needs one target of shape [] with `classes` (its labels are the strata)"
        )


def _losses(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    for output, loss in spec.losses.items():
        target = spec.targets.get(output)
        if target is None:
            continue
        if loss.type.startswith("Sparse") and target.dtype not in INTEGER_DTYPES:
            yield doc.issue(
                ("targets", output, "dtype"), f"`{loss.type}` needs integer class ids; the target is {target.dtype}"
            )
        if (
            loss.type == "CategoricalCrossentropy"
            and target.class_count
            and (not target.shape or target.shape[-1] != target.class_count)
        ):
            yield doc.issue(
                ("targets", output, "shape"),
                f"`CategoricalCrossentropy` needs one-hot targets of shape [..., {target.class_count}]",
            )


def _performance(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    if spec.train.jit_compile is True and spec.strategy.type not in JIT_STRATEGIES:
        yield doc.issue(
            ("train", "jit_compile"),
            f"an XLA-compiled step under `{spec.strategy.type}` failed on CPU devices (TF 2.21); "
            "use `auto` (off here) or `false`",
        )
    blocker = in_memory_blocker(spec)
    if spec.data.train.in_memory is True and blocker:
        yield doc.issue(("data", "train", "in_memory"), f"the in-memory path cannot be used: {blocker}")
    replicas = len(spec.strategy.devices or ()) or spec.strategy.cpu_replicas
    if replicas and spec.data.train.batch_size % replicas:
        yield doc.issue(
            ("data", "train", "batch_size"),
            f"the global batch {spec.data.train.batch_size} does not split evenly over {replicas} devices",
        )


def _lookups_under_xla(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    lookups = xla_lookups(spec)
    if spec.train.jit_compile is True and lookups:
        yield doc.issue(
            ("train", "jit_compile"),
            f"XLA cannot compile `{lookups[0]}`'s hash-table lookup; use `auto` (off here) or `false`",
        )


def _training_control(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    yield from _clipping_per_replica(spec, doc)
    yield from _learning_rate_written(spec, doc)
    if spec.debug.check_numerics and spec.train.jit_compile is True:
        yield doc.issue(
            ("debug", "check_numerics"), "check_numerics runs outside XLA: set `train.jit_compile` to auto or false"
        )
    if spec.train.reduce_on_plateau is not None:
        loc = ("train", "reduce_on_plateau", "monitor")
        yield from _monitor(spec, doc, loc, spec.train.reduce_on_plateau.monitor)
    yield from _batching(spec, doc)
    if spec.train.sharpness_aware is not None and spec.train.gradient_accumulation_steps > 1:
        yield doc.issue(
            ("train", "sharpness_aware"),
            "SAM's ascent needs the whole batch's gradient before the second pass: not with "
            "`gradient_accumulation_steps`; raise `batch_size` instead",
        )


def _clipping_per_replica(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Keras's own clipping arguments clip each replica's gradients: wrong under more than one replica."""
    if spec.strategy.type not in ("mirrored", "multi_worker_mirrored"):
        return
    for arg in ("clipnorm", "global_clipnorm", "clipvalue"):
        if arg in spec.optimizer.args:
            yield doc.issue(
                ("optimizer", arg),
                f"Keras applies `{arg}` to each replica's gradients before they are summed, so under "
                f"`{spec.strategy.type}` it clips the wrong thing; use `train.gradient_clipping`",
                key=True,
            )


def _learning_rate_written(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Warm-up and reduce-on-plateau change a learning rate the spec writes out."""
    train = spec.train
    if (train.warmup or train.reduce_on_plateau) and "learning_rate" not in spec.optimizer.args:
        field = "warmup" if train.warmup else "reduce_on_plateau"
        yield doc.issue(("train", field), f"`{field}` needs the optimizer's `learning_rate` written out")


def _monitor(spec: Spec, doc: Located, loc: Loc, monitor: str) -> Iterator[SpecIssue]:
    """A monitored value is one the history logs (else it silently tracks nothing)."""
    keys = history_keys(spec)
    if monitor.startswith("val_") and not has_validation(spec):
        yield doc.issue(loc, f"`{monitor}` needs validation data: add `data.validation` or `data.validation_split`")
    elif monitor not in keys and monitor.endswith("_loss") and may_add_losses(spec):
        yield doc.issue(
            loc,
            f"`{monitor}` is not a figure a tracker can follow (those are: {', '.join(keys)}); a layer's "
            "add_loss term (`<layer name>_loss`) is logged, but cannot be monitored yet",
        )
    elif monitor not in keys:
        yield doc.issue(
            loc,
            f"`{monitor}` is not logged by this run{catalog.did_you_mean(monitor, keys)} (logged: {', '.join(keys)})",
        )


def _batching(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Variable-length examples are padded or bucketed, one way, by a named input."""
    pipeline = spec.data.train
    if pipeline.padded_batch and pipeline.bucket_by_sequence_length:
        yield doc.issue(
            ("data", "train", "bucket_by_sequence_length"),
            "give `padded_batch` or `bucket_by_sequence_length`, not both (buckets pad too)",
        )
    bucket = pipeline.bucket_by_sequence_length
    if bucket is not None:
        yield from _bucketing(spec, doc, bucket)
    variable = [name for name, item in {**spec.model.inputs, **spec.targets}.items() if None in item.shape]
    if variable and not (pipeline.padded_batch or bucket):
        yield doc.issue(
            ("data", "train"),
            f"`{variable[0]}` has a variable-length (null) dimension: add `padded_batch` or `bucket_by_sequence_length`",
        )


def _bucketing(spec: Spec, doc: Located, bucket) -> Iterator[SpecIssue]:
    if bucket.input is None and len(spec.model.inputs) > 1:
        yield doc.issue(
            ("data", "train", "bucket_by_sequence_length"), "name the `input` whose length buckets examples"
        )
    if bucket.input is not None and bucket.input not in spec.model.inputs:
        yield doc.issue(
            ("data", "train", "bucket_by_sequence_length", "input"),
            f"`{bucket.input}` is not an input{catalog.did_you_mean(bucket.input, spec.model.inputs)}",
        )
    if spec.train.gradient_accumulation_steps > 1:
        yield doc.issue(
            ("train", "gradient_accumulation_steps"), "accumulation splits equal micro-batches; buckets vary in size"
        )


def _padding(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`padded_batch` names inputs or targets, and pads each with a value of its own type (a
    string for strings, a number for numbers)."""
    fields = {**spec.model.inputs, **spec.targets}
    for split in ("train", "validation"):
        padded = getattr(getattr(spec.data, split), "padded_batch", None) if getattr(spec.data, split) else None
        if padded is None:
            continue
        loc = ("data", split, "padded_batch")
        for option in ("padded_shapes", "padding_values"):
            for name, value in (getattr(padded, option) or {}).items():
                if name not in fields:
                    hint = catalog.did_you_mean(name, fields)
                    yield doc.issue((*loc, option, name), f"`{name}` is not an input or target{hint}")
                elif option == "padding_values" and isinstance(value, str) != (fields[name].dtype == "string"):
                    kind = "a string" if fields[name].dtype == "string" else "a number"
                    yield doc.issue(
                        (*loc, option, name), f"`{name}` is {fields[name].dtype}: pad it with {kind}, not {value!r}"
                    )


def _precision(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    if spec.precision == "float32":
        return
    for output, layers in spec.model.outputs.items():
        last = layers[-1] if layers else None
        dtype = getattr(last, "args", {}).get("dtype")
        if dtype is not None and dtype != "float32":
            yield doc.issue(
                ("model", "outputs", output, len(layers) - 1, "dtype"),
                f"under `{spec.precision}` an output layer must compute in float32 (softmax and losses "
                "overflow in float16); remove `dtype` and tfgen sets it",
            )


def _early_stopping(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Every tracker's `monitor` names a value the history logs (else it silently tracks nothing)."""
    monitors = [
        (("train", "early_stopping", "monitor"), spec.train.early_stopping),
        (("checkpoint", "keep_best", "monitor"), spec.checkpoint.keep_best),
    ]
    for loc, tracker in monitors:
        if tracker is not None:
            yield from _monitor(spec, doc, loc, tracker.monitor)


def _literal_arguments(spec: Spec, section: str) -> Iterator[tuple[Loc, dict[str, Any]]]:
    """(location, arguments) of a section's free-form arguments: Keras objects' and kwargs."""
    return LITERAL_ARGUMENTS[section](spec)


def _model_arguments(spec: Spec) -> Iterator[tuple[Loc, dict[str, Any]]]:
    yield from ((loc, layer.args) for loc, layer in model_items(spec))
    yield ("model", "kwargs"), spec.model.kwargs


def _data_arguments(spec: Spec) -> Iterator[tuple[Loc, dict[str, Any]]]:
    for field in ("preprocess", "augment"):
        layers = located_items(getattr(spec.data.train, field), ("data", "train", field))
        yield from ((loc, layer.args) for loc, layer in layers)
    for loc, source in located_sources(spec):
        if field := unit_of(source).arguments_field:
            yield (*loc, field), getattr(source, field)


def _loss_arguments(spec: Spec) -> Iterator[tuple[Loc, dict[str, Any]]]:
    for output, loss in spec.losses.items():
        yield ("losses", output), loss.args


def _metric_arguments(spec: Spec) -> Iterator[tuple[Loc, dict[str, Any]]]:
    for output, metrics in spec.metrics.items():
        for i, metric in enumerate(metrics):
            yield ("metrics", output, i), metric.args


def _optimizer_arguments(spec: Spec) -> Iterator[tuple[Loc, dict[str, Any]]]:
    yield ("optimizer",), spec.optimizer.args


LITERAL_ARGUMENTS = {
    "model": _model_arguments,
    "data": _data_arguments,
    "losses": _loss_arguments,
    "metrics": _metric_arguments,
    "optimizer": _optimizer_arguments,
}


def _finite(section: str):
    """The check that `section`'s free-form arguments hold no NaN or infinity: the script writes
    them as Python literals (typed fields are checked by the spec models)."""

    def check(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
        for base, arguments in _literal_arguments(spec, section):
            for loc, value in walk(arguments, base):
                if isinstance(value, float) and not math.isfinite(value):
                    spelled = ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
                    yield doc.issue(loc, f"must be a finite number, found {spelled}")

    return check


# Each check and the top-level sections it reads: with a structurally broken section, the checks
# that do not read it still run, so a spec's errors are reported together.
CHECKS = (
    (_training_control, {"train", "strategy", "optimizer", "debug", "data", "model", "targets", "metrics"}),
    (_performance, {"train", "strategy", "data", "model"}),
    (_lookups_under_xla, {"train", "model"}),
    (_precision, {"precision", "model"}),
    (_outputs, {"model", "targets", "losses", "metrics"}),
    (_model, {"model", "data"}),
    (_adapt, {"model", "data", "precision"}),
    (_stratify, {"data", "targets"}),
    (_source_rules, {"data", "model", "targets"}),
    (_padding, {"data", "model", "targets"}),
    (_losses, {"losses", "targets"}),
    (_early_stopping, {"train", "checkpoint", "data", "model", "targets", "metrics"}),
    (_history, {"model", "targets", "metrics", "loss_weighting", "algorithm"}),
    *BRANCH_CHECKS,
    *DISTILLATION_CHECKS,
    *STRING_CHECKS,
    *SCRIPT_CHECKS,
    *WEIGHT_CHECKS,
    *((_finite(section), {section}) for section in LITERAL_ARGUMENTS),
)
