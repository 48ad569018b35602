"""Planning: turn a validated Spec into a plain view of what the templates emit.

Every decision about the generated code is made here, in Python; the templates only lay the
view out. Everything that lands in the code as a value goes through `literal()` (a Python
literal, never spliced text) or is a name the spec validation already restricted to identifiers.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Any

from . import catalog
from .names import has_validation, metric_keys, output_names, train_keys
from .spec import KerasObject, Spec
from .spec.data import IN_MEMORY_SOURCES
from .spec.model import Residual

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
SYNTHETIC_LENGTH = 8  # the length of a variable (null) dimension in synthetic data


def literal(value: Any) -> str:
    """A Python literal for plain spec data (str, number, bool, None, list, dict)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot emit {type(value).__name__} as a literal")


def keras_call(obj: KerasObject | dict, kind: str, extra: dict[str, str] | None = None) -> str:
    """`keras.<namespace>.<Class>(arg=value, ...)`, with nested Keras objects constructed too."""
    if isinstance(obj, dict):
        name, args = obj["type"], {k: v for k, v in obj.items() if k != "type"}
    else:
        name, args = obj.type, obj.args
    parts = []
    for arg, value in args.items():
        if isinstance(value, dict) and "type" in value:
            code = keras_call(value, catalog.nested_kind(arg, value["type"]))
        else:
            code = literal(value)
        parts.append(f"{arg}={code}")
    parts += [f"{arg}={code}" for arg, code in (extra or {}).items()]
    return f"{catalog.NAMESPACE[kind]}.{name}({', '.join(parts)})"


def layer_lines(items: list, var: str, depth: int = 0) -> list[str]:
    """`var = Layer(...)(var)` lines; a `{residual: [...]}` block adds its input back (skip connection)."""
    lines = []
    for item in items:
        if isinstance(item, Residual):
            shortcut = "shortcut" if depth == 0 else f"shortcut_{depth + 1}"
            lines.append(f"{shortcut} = {var}")
            lines += layer_lines(item.residual, var, depth + 1)
            lines.append(f"{var} = keras.layers.Add()([{shortcut}, {var}])")
        else:
            lines.append(f"{var} = {keras_call(item, 'layers')}({var})")
    return lines


def float32_head(layers: list) -> list:
    """The head's layers with the last one computing in float32 (so losses never run in float16)."""
    if layers and isinstance(layers[-1], KerasObject) and "dtype" not in layers[-1].args:
        last = layers[-1]
        return [*layers[:-1], KerasObject.model_construct(type=last.type, args={**last.args, "dtype": "float32"})]
    if layers and isinstance(layers[-1], KerasObject):
        return layers  # an explicit dtype: validation checked it is float32
    return [*layers, KerasObject.model_construct(type="Activation", args={"activation": "linear", "dtype": "float32"})]


def shape_literal(shape: list[int]) -> str:
    return literal(tuple(shape))


@dataclass
class SourceView:
    """How one data source is loaded (the template has a block per `type`)."""

    type: str
    module: str = ""
    function: str = ""
    kwargs: str = ""
    path: str = ""
    x: str = ""
    y: str = ""
    features: str = ""
    compression: str = "None"
    examples: int = 0
    seed: str = "SEED"
    dataset: str = ""
    split: str = ""


@dataclass
class OutputView:
    name: str
    layers: list[str]
    loss: str
    weight: float
    # Keras losses reduce only the last axis; targets of rank >= 2 (e.g. masks) leave more axes,
    # which are averaged per example as Keras's default reduction does.
    mean_per_example: bool
    metrics: list[tuple[str, str]] = field(default_factory=list)  # (history key, constructor)


@dataclass
class View:
    spec_path: str
    spec_sha256: str
    version: str
    name: str
    seed: int
    output_dir: str
    epochs: int
    batch_size: int
    validation_batch_size: int
    shuffle: int | None
    drop_remainder: bool
    cache_train: str | None
    cache_validation: str | None
    validation_split: float | None
    has_validation: bool
    train_source: SourceView
    validation_source: SourceView | None
    inputs: list[tuple[str, str, str]]  # name, shape literal, dtype
    targets: list[tuple[str, str, str]]
    synthetic_features: list[tuple[str, str]]  # name, numpy expression of `n` examples
    synthetic_targets: list[tuple[str, str]]
    synthetic_train_examples: int
    synthetic_validation_examples: int
    preprocess: list[str]
    augment: list[str]
    only_input: str | None
    python_imports: list[str]
    builder_module: str | None
    builder_function: str | None
    builder_kwargs: str
    trunk: list[str]
    outputs: list[OutputView]
    several_outputs: bool
    optimizer: str
    train_keys: list[str]
    early_stopping: dict[str, Any] | None
    checkpoint_every: int
    checkpoint_keep: int
    docstring: list[str]
    imports_math: bool
    total_loss: str
    loss_weights: str | None
    needs_per_example_mean: bool
    precision: str
    strategy: dict[str, Any]
    jit: bool | str
    steps_per_execution: int | None
    in_memory: str  # "true", "false" or "auto" (decided at run time by the size budget)
    shard_policy: str | None
    shard_policy_reason: str
    loss_weighting: str
    ema_decay: float
    total_loss_doc: str
    clipping: dict[str, Any] | None
    accumulation: int
    warmup: dict[str, Any] | None
    plateau: dict[str, Any] | None
    learning_rate: str
    optimizer_args: dict[str, str]
    optimizer_class: str
    validation_every: int
    validation_steps: int | None
    allow_unused: bool
    on_nonfinite: str
    check_numerics: bool
    variable_batches: bool
    padded_batch: str | None
    validation_padded_batch: str | None
    bucketing: dict[str, Any] | None
    deterministic: bool
    tensorboard: bool
    tensorboard_every: int
    profile: dict[str, int] | None
    every_steps: int | None
    keep_best: dict[str, Any] | None
    export: list[str]
    resume: bool
    resolved_spec: str

    @property
    def boundaries(self) -> list[str]:
        """Chunk limits so that saves, summaries and the profile window fall on chunk ends."""
        limits = []
        if self.every_steps:
            limits.append("CHECKPOINT_EVERY_STEPS - done % CHECKPOINT_EVERY_STEPS")
        if self.tensorboard:
            limits.append("LOG_EVERY_STEPS - done % LOG_EVERY_STEPS")
        if self.profile:
            for edge in ("PROFILE_START_STEP - 1", "PROFILE_START_STEP - 1 + PROFILE_STEPS"):
                limits.append(f"{edge} - done if done < {edge} else chunk")
        return limits

    def optimizer_with(self, learning_rate: str) -> str:
        """The optimizer constructor with `learning_rate` passed as the given expression."""
        args = [f"learning_rate={learning_rate}"] + [f"{k}={v}" for k, v in self.optimizer_args.items()]
        return f"{self.optimizer_class}({', '.join(args)})"

    @property
    def policy(self) -> bool:
        return self.precision != "float32"

    @property
    def loss_scaling(self) -> bool:
        return self.precision == "mixed_float16"

    @property
    def multi_worker(self) -> bool:
        return self.strategy["type"] == "multi_worker_mirrored"

    @property
    def multi_replica(self) -> bool:
        return self.strategy["type"] in ("mirrored", "multi_worker_mirrored")

    @property
    def memory_path(self) -> bool:
        return self.in_memory != "false"

    @property
    def iterator_path(self) -> bool:
        return self.in_memory != "true"

    @property
    def uses_keras_source(self) -> bool:
        return any(s.type == "keras" for s in self.sources)

    @property
    def sources(self) -> list[SourceView]:
        return [self.train_source] + ([self.validation_source] if self.validation_source else [])

    @property
    def has_dataset_sources(self) -> bool:
        """Whether a source may give a tf.data.Dataset rather than arrays."""
        return any(s.type in ("python", "tfrecord") for s in self.sources)

    @property
    def uses_npz(self) -> bool:
        return any(s.type == "npz" for s in self.sources)

    @property
    def uses_tfrecord(self) -> bool:
        return any(s.type == "tfrecord" for s in self.sources)

    def improved(self, value: str, reference: str, which: str) -> str:
        """Whether `value` beats `reference` by more than min_delta, as the Keras callbacks test."""
        config = {"early_stopping": self.early_stopping, "plateau": self.plateau, "keep_best": self.keep_best}[which]
        name = {"early_stopping": "EARLY_STOPPING_MIN_DELTA", "plateau": "PLATEAU_MIN_DELTA"}.get(which, "")
        delta = f" + {name}" if config["mode"] == "min" else f" - {name}"
        op = "<" if config["mode"] == "min" else ">"
        return f"{value}{delta if config['min_delta'] else ''} {op} {reference}"


def _source(source, seed: str = "SEED") -> SourceView:
    if source.type == "python":
        module, _, function = source.function.partition(":")
        return SourceView("python", module=module, function=function, kwargs=_kwargs(source.kwargs))
    if source.type == "npz":
        return SourceView("npz", path=literal(source.path), x=literal(source.x), y=literal(source.y))
    if source.type == "tfrecord":
        features = {
            name: (tuple(feature.shape), feature.dtype) for name, feature in source.features.items()
        }
        description = ", ".join(
            f"{literal(name)}: tf.io.FixedLenFeature({literal(shape)}, tf.{dtype})" for name, (shape, dtype) in features.items()
        )
        return SourceView(
            "tfrecord",
            path=literal(source.files),
            features="{" + description + "}",
            compression=literal(source.compression),
        )
    if source.type == "keras":
        return SourceView("keras", dataset=source.dataset, split=source.split)
    return SourceView("synthetic", examples=source.examples, seed=seed)


def _kwargs(kwargs: dict[str, Any]) -> str:
    """Keyword arguments as `name=value` when every key is an identifier, else `**{...}`."""
    if all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
        return ", ".join(f"{k}={literal(v)}" for k, v in kwargs.items())
    return f"**{literal(kwargs)}"


def _synthetic(shape: list[int | None], dtype: str, classes: int | None) -> str:
    """A numpy expression drawing `n` random examples of one input or target from `rng`."""
    shape = [SYNTHETIC_LENGTH if dim is None else dim for dim in shape]
    size = literal((None, *shape)).replace("None", "n")
    if classes is not None and dtype in FLOAT_DTYPES and shape and shape[-1] == classes and classes > 1:
        return f'np.eye({classes}, dtype="{dtype}")[rng.integers(0, {classes}, size={literal(("n", *shape[:-1])).replace(chr(39) + "n" + chr(39), "n")})]'
    if classes is not None:
        return f'rng.integers(0, {classes}, size={size}).astype("{dtype}")'
    if dtype == "uint8":
        return f'rng.integers(0, 256, size={size}).astype("uint8")'
    if dtype == "bool":
        return f"rng.random(size={size}) < 0.5"
    if dtype in FLOAT_DTYPES:
        return f'rng.random(size={size}).astype("{dtype}")'
    return f'rng.integers(0, 100, size={size}).astype("{dtype}")'


def _mode(monitor: str, mode: str) -> str:
    if mode != "auto":
        return mode
    # As Keras's EarlyStopping: accuracy-like metrics are maximised, everything else minimised.
    name = monitor.removeprefix("val_")
    return "max" if any(word in name for word in ("acc", "auc", "precision", "recall", "iou")) else "min"


def _docstring(spec: Spec, outputs: list[OutputView], train: SourceView) -> list[str]:
    described = {
        "python": f"`{spec.data.train.source.function}`" if train.type == "python" else "",
        "npz": "arrays from an .npz file",
        "tfrecord": "TFRecord files",
        "synthetic": f"{train.examples} random examples",
        "keras": f"`keras.datasets.{train.dataset}` ({train.split} split)",
    }[train.type]
    lines = [
        f"Train `{spec.name}` with a custom TensorFlow training loop.",
        "",
        f"Data: {described}"
        + ("; a random part held out for validation." if spec.data.validation_split else "."),
        "Model: " + ("built by `" + spec.model.builder + "`" if spec.model.builder else f"{len(spec.model.layers)} shared layers")
        + "; outputs " + ", ".join(f"`{o.name}` ({spec.losses[o.name].type})" for o in outputs) + ".",
        f"Optimizer: {spec.optimizer.type}"
        + ("; early stopping." if spec.train.early_stopping else "."),
    ]
    return lines


def make_view(spec: Spec, *, spec_path: str, spec_sha256: str, version: str, resolved: dict | None = None) -> View:
    several = len(output_names(spec)) > 1
    metrics_by_output: dict[str, list[tuple[str, str]]] = {}
    for output, key, metric in metric_keys(spec):
        metrics_by_output.setdefault(output, []).append((key, keras_call(metric, "metrics")))
    outputs = [
        OutputView(
            name=name,
            layers=layer_lines(_head(spec, name), "h"),
            loss=keras_call(spec.losses[name], "losses", {"reduction": "None"}),
            weight=spec.losses[name].weight,
            mean_per_example=len(spec.targets[name].shape) >= 2,
            metrics=metrics_by_output.get(name, []),
        )
        for name in output_names(spec)
    ]
    train = spec.data.train
    validation = spec.data.validation
    stopping = spec.train.early_stopping
    early = None
    if stopping is not None:
        mode = _mode(stopping.monitor, stopping.mode)
        early = {
            "monitor": stopping.monitor,
            "mode": mode,
            "patience": stopping.patience,
            "min_delta": stopping.min_delta,
            "baseline": stopping.baseline,
            "restore_best_weights": stopping.restore_best_weights,
            "start_from_epoch": stopping.start_from_epoch,
            "initial": "math.inf" if mode == "min" else "-math.inf",
            "conditions": _monitor_conditions(spec, stopping.monitor, "EARLY_STOPPING_MONITOR")
            + (["epoch > EARLY_STOPPING_START_FROM_EPOCH"] if stopping.start_from_epoch else []),
        }
    sources = [train.source] + ([validation.source] if validation else [])
    python_imports = sorted({s.function.partition(":")[0] for s in sources if s.type == "python"})
    builder_module = builder_function = None
    if spec.model.builder:
        builder_module, _, builder_function = spec.model.builder.partition(":")
        python_imports = sorted(set(python_imports) | {builder_module})
    inputs = [(n, shape_literal(i.shape), i.dtype) for n, i in spec.model.inputs.items()]
    targets = [(n, shape_literal(t.shape), t.dtype) for n, t in spec.targets.items()]
    synthetic_train = train.source.examples if train.source.type == "synthetic" else 16 * train.batch_size
    validation_batch = (validation.batch_size if validation and validation.batch_size else None) or train.batch_size
    if validation is not None and validation.source.type == "synthetic":
        synthetic_validation = validation.source.examples
    else:
        synthetic_validation = 4 * validation_batch
    shard_policy, shard_reason = _shard_policy(spec)
    optimizer_class, optimizer_args, learning_rate = _optimizer_parts(spec)
    return View(
        spec_path=spec_path,
        spec_sha256=spec_sha256,
        version=version,
        name=spec.name,
        seed=spec.seed,
        output_dir=literal(spec.output_dir or f"runs/{spec.name}"),
        epochs=spec.train.epochs,
        batch_size=train.batch_size,
        validation_batch_size=validation_batch,
        shuffle=train.shuffle,
        drop_remainder=train.drop_remainder,
        cache_train=_cache(train.cache),
        cache_validation=_cache(validation.cache) if validation else None,
        validation_split=spec.data.validation_split,
        has_validation=has_validation(spec),
        train_source=_source(train.source),
        validation_source=_source(validation.source, seed="SEED + 1") if validation else None,
        inputs=inputs,
        targets=targets,
        synthetic_features=[(n, _synthetic(i.shape, i.dtype, i.vocabulary or (None if i.dtype in ("uint8", *FLOAT_DTYPES, "bool") else 2))) for n, i in spec.model.inputs.items()],
        synthetic_targets=[(n, _synthetic(t.shape, t.dtype, t.classes)) for n, t in spec.targets.items()],
        synthetic_train_examples=synthetic_train,
        synthetic_validation_examples=synthetic_validation,
        preprocess=[keras_call(layer, "layers") for layer in train.preprocess],
        augment=[keras_call(layer, "layers") for layer in train.augment],
        only_input=next(iter(spec.model.inputs)) if len(spec.model.inputs) == 1 else None,
        python_imports=python_imports,
        builder_module=builder_module,
        builder_function=builder_function,
        builder_kwargs=_kwargs(spec.model.kwargs),
        trunk=layer_lines(spec.model.layers, "x"),
        outputs=outputs,
        several_outputs=several,
        optimizer=keras_call(spec.optimizer, "optimizers"),
        train_keys=train_keys(spec),
        early_stopping=early,
        checkpoint_every=spec.checkpoint.every_epochs or 1,
        checkpoint_keep=spec.checkpoint.keep,
        docstring=_docstring(spec, outputs, _source(train.source)),
        imports_math=early is not None or spec.train.reduce_on_plateau is not None
        or spec.loss_weighting.type == "uncertainty" or spec.checkpoint.keep_best is not None,
        total_loss=_total_loss(outputs, spec.loss_weighting.type),
        loss_weights=None
        if spec.loss_weighting.type == "static" and (all(o.weight == 1.0 for o in outputs) or len(outputs) == 1)
        else "{" + ", ".join(f"{literal(o.name)}: {literal(o.weight)}" for o in outputs) + "}",
        needs_per_example_mean=any(o.mean_per_example for o in outputs),
        precision=spec.precision,
        strategy={
            "type": spec.strategy.type,
            "device": spec.strategy.device,
            "devices": spec.strategy.devices,
            "communication": spec.strategy.communication.upper(),
        },
        jit=resolve_jit(spec),
        steps_per_execution=None if spec.train.steps_per_execution == "auto" else spec.train.steps_per_execution,
        in_memory=resolve_in_memory(spec),
        shard_policy=shard_policy,
        shard_policy_reason=shard_reason,
        loss_weighting=spec.loss_weighting.type,
        ema_decay=spec.loss_weighting.decay,
        total_loss_doc={
            "static": "the weighted sum of the outputs' losses",
            "uncertainty": "each task's loss over its learned variance, plus its log-variance",
            "ema_ratio": "the outputs' losses weighted by their moving-average ratios",
        }[spec.loss_weighting.type],
        clipping=_clipping(spec),
        accumulation=spec.train.gradient_accumulation_steps,
        warmup=spec.train.warmup.model_dump() if spec.train.warmup else None,
        plateau=_plateau(spec),
        learning_rate=learning_rate,
        optimizer_args=optimizer_args,
        optimizer_class=optimizer_class,
        validation_every=spec.train.validation_every,
        validation_steps=spec.train.validation_steps,
        allow_unused=spec.train.allow_unused_variables,
        on_nonfinite=spec.train.on_nonfinite,
        check_numerics=spec.debug.check_numerics,
        variable_batches=_variable_batches(spec),
        padded_batch=_padded(spec, train.padded_batch, False),
        validation_padded_batch=_padded(
            spec, validation.padded_batch if validation else None,
            train.padded_batch is not None or train.bucket_by_sequence_length is not None,
        ),
        bucketing=_bucketing(spec),
        deterministic=spec.deterministic,
        tensorboard=spec.logging.tensorboard,
        tensorboard_every=spec.logging.every_steps,
        profile=spec.logging.profile.model_dump() if spec.logging.profile else None,
        every_steps=spec.checkpoint.every_steps,
        keep_best=_keep_best(spec),
        export=list(spec.checkpoint.export),
        resume=spec.checkpoint.resume == "auto",
        resolved_spec=literal(resolved if resolved is not None else spec.model_dump(mode="json")),
    )


def _keep_best(spec: Spec) -> dict[str, Any] | None:
    keep = spec.checkpoint.keep_best
    if keep is None:
        return None
    mode = _mode(keep.monitor, keep.mode)
    return {
        "monitor": keep.monitor,
        "mode": mode,
        "min_delta": 0,
        "initial": "math.inf" if mode == "min" else "-math.inf",
        "conditional": keep.monitor.startswith("val_") and spec.train.validation_every > 1,
    }


def _clipping(spec: Spec) -> dict[str, Any] | None:
    clip = spec.train.gradient_clipping
    if clip is None:
        return None
    kind = next(k for k in ("global_norm", "norm", "value") if getattr(clip, k) is not None)
    return {"kind": kind, "value": getattr(clip, kind)}


def _variable_batches(spec: Spec) -> bool:
    """Whether training batches can differ in size (then the loss averages over the real count)."""
    train = spec.data.train
    return not train.drop_remainder or train.bucket_by_sequence_length is not None


def _bucketing(spec: Spec) -> dict[str, Any] | None:
    bucket = spec.data.train.bucket_by_sequence_length
    if bucket is None:
        return None
    return {
        "input": bucket.input or next(iter(spec.model.inputs)),
        "boundaries": literal(bucket.boundaries),
        "batch_sizes": literal(bucket.batch_sizes),
    }


# Strategies under which an XLA-compiled step is known to work (on CPU: XLA under MirroredStrategy
# over logical CPU devices failed; see ../shared/notes/keras3-custom-loops.md).
JIT_STRATEGIES = ("default", "one_device")


def resolve_jit(spec: Spec) -> bool | str:
    """True, False, or "gpu": compile where a GPU is visible (decided when the script runs).

    Measured here (docs/benchmarks.md): XLA makes the MLP step ~1.5x faster on CPU but the float32
    CNN step ~30% slower, oneDNN's convolutions beating XLA's; so `auto` compiles float32
    convolutional models (and builder models, whose layers are unknown) only where a GPU is
    visible. In float16, which has no fast CPU kernels, XLA was ~2.5x faster: compiled everywhere.
    """
    if spec.train.jit_compile != "auto":
        return spec.train.jit_compile
    if spec.strategy.type not in JIT_STRATEGIES or spec.debug.check_numerics:
        return False
    train = spec.data.train
    if train.bucket_by_sequence_length or (train.padded_batch and not train.padded_batch.padded_shapes):
        return False  # batch shapes vary: XLA would compile the step again for each one
    convolutional = spec.model.builder is not None or any("Conv" in name for name in _layer_types(spec))
    if convolutional and spec.precision != "mixed_float16":
        return "gpu"
    return True  # float16 has no fast CPU kernels: XLA's float16 path was ~2.5x faster here


def _layer_types(spec: Spec) -> list[str]:
    def walk(items):
        for item in items:
            if isinstance(item, Residual):
                yield from walk(item.residual)
            else:
                yield item.type

    heads = [layer for layers in spec.model.outputs.values() for layer in layers]
    return list(walk(list(spec.model.layers) + heads))


def in_memory_blocker(spec: Spec) -> str | None:
    """Why the in-memory fast path cannot be used for this spec, or None."""
    train = spec.data.train
    if train.source.type not in IN_MEMORY_SOURCES:
        return f"a `{train.source.type}` source streams from files"
    if not train.drop_remainder:
        return "it needs `drop_remainder: true` (every step slices a full global batch)"
    if train.cache is not False:
        return "`cache` applies to the tf.data pipeline only"
    if train.padded_batch or train.bucket_by_sequence_length:
        return "variable-length examples are padded by the tf.data pipeline"
    return None


def resolve_in_memory(spec: Spec) -> str:
    setting = spec.data.train.in_memory
    if setting is False or (setting == "auto" and in_memory_blocker(spec)):
        return "false"
    return "true" if setting is True else "auto"


def _shard_policy(spec: Spec) -> tuple[str | None, str]:
    if spec.strategy.type != "multi_worker_mirrored":
        return None, ""
    policy = spec.data.shard_policy
    if policy == "auto":
        if spec.data.train.source.type == "tfrecord":
            return "FILE", "whole files per worker, for a file source"
        return "DATA", "every worker reads all and keeps its share, for an in-memory source"
    return policy.upper(), "as the spec sets `data.shard_policy`"


def _total_loss(outputs: list[OutputView], weighting: str) -> str:
    """The per-example total: the weighted sum of the outputs' losses."""
    if weighting == "uncertainty":
        return ("tf.add_n([LOSS_WEIGHTS[name] * (tf.exp(-log_variances[name]) * value + log_variances[name])"
                " for name, value in task_losses.items()])")
    if weighting == "ema_ratio":
        return ("tf.add_n([LOSS_WEIGHTS[name] * loss_weights[i] * value"
                " for i, (name, value) in enumerate(task_losses.items())])")
    if len(outputs) == 1:
        weight = outputs[0].weight
        term = f'task_losses["{outputs[0].name}"]'
        return term if weight == 1.0 else f"{literal(weight)} * {term}"
    if all(o.weight == 1.0 for o in outputs):
        return "tf.add_n(list(task_losses.values()))"
    return "tf.add_n([LOSS_WEIGHTS[name] * value for name, value in task_losses.items()])"


def _head(spec: Spec, name: str) -> list:
    layers = list(spec.model.outputs.get(name, []))
    return float32_head(layers) if spec.precision != "float32" else layers


def _monitor_conditions(spec: Spec, monitor: str, constant: str) -> list[str]:
    """With validation every N epochs, a `val_` value is only there on validation epochs."""
    if monitor.startswith("val_") and spec.train.validation_every > 1:
        return [f"{constant} in row"]
    return []


def _plateau(spec: Spec) -> dict[str, Any] | None:
    plateau = spec.train.reduce_on_plateau
    if plateau is None:
        return None
    mode = _mode(plateau.monitor, plateau.mode)
    return {
        **plateau.model_dump(),
        "mode": mode,
        "initial": "math.inf" if mode == "min" else "-math.inf",
        "conditions": _monitor_conditions(spec, plateau.monitor, "PLATEAU_MONITOR"),
    }


def _optimizer_parts(spec: Spec) -> tuple[str, dict[str, str], str]:
    """(class expression, other arguments as code, learning-rate expression)."""
    optimizer = spec.optimizer
    args = {}
    for arg, value in optimizer.args.items():
        if arg == "learning_rate":
            continue
        args[arg] = keras_call(value, catalog.nested_kind(arg, value["type"])) if isinstance(value, dict) and "type" in value else literal(value)
    rate = optimizer.args.get("learning_rate")
    if isinstance(rate, dict):
        rate_code = keras_call(rate, "schedules")
    else:
        rate_code = literal(rate) if rate is not None else "None"
    return f"keras.optimizers.{optimizer.type}", args, rate_code


def _padded(spec: Spec, padded, variable: bool) -> str | None:
    """Keyword arguments of padded_batch (a trailing comma-space), "" for defaults, None: no padding."""
    if padded is None:
        return "" if variable else None
    parts = []
    groups = [(spec.model.inputs, "input"), (spec.targets, "target")]
    if padded.padded_shapes:
        shapes = [
            {name: tuple(padded.padded_shapes.get(name, item.shape)) for name, item in group.items()}
            for group, _ in groups
        ]
        parts.append(f"padded_shapes=({literal(shapes[0])}, {literal(shapes[1])})")
    if padded.padding_values:
        values = [
            {name: (float if item.dtype.startswith(("float", "bfloat")) else int)(padded.padding_values.get(name, 0))
             for name, item in group.items()}
            for group, _ in groups
        ]
        parts.append(f"padding_values=({literal(values[0])}, {literal(values[1])})")
    return "".join(f"{part}, " for part in parts)


def _cache(cache: bool | str) -> str | None:
    if cache is False:
        return None
    return literal("" if cache is True else cache)
