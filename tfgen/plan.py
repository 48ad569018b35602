"""Planning: turn a validated Spec into a typed view of what the templates emit.

Every decision about the generated code is made here; the templates lay the view out and own
all code text. Spec values reach the code only through `literal()` (a Python literal, never
spliced text), as Keras constructor calls built from validated class and argument names, or as
names the spec validation restricted to identifiers.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from . import catalog
from .names import has_validation, metric_keys, output_names
from .rules import (
    INTEGER_ADAPTED,
    Jit,
    Placement,
    model_layers,
    resolve_in_memory,
    resolve_jit,
)
from .spec import KerasObject, Spec
from .spec.model import Residual

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
RUNTIME_MODULE = "tfgen_runtime"  # the support module written beside the scripts

# Every top-level name a generated script defines or imports, in one place: a test parses every
# generated script and fails if it binds a name missing here. User modules are never bound at
# the top level (`rt.function` imports them when called), so no spec can shadow these.
SCRIPT_NAMES = frozenset(
    """os sys time zipfile Path keras tf rt
    SEED OUTPUT_DIR SPEC_DIR EPOCHS GLOBAL_BATCH_SIZE VALIDATION_BATCH_SIZE SHUFFLE_BUFFER VALIDATION_SPLIT
    INPUTS TARGETS SYNTHETIC_TRAIN_EXAMPLES SYNTHETIC_VALIDATION_EXAMPLES STEPS_PER_EXECUTION
    ACCUMULATION_STEPS EXAMPLES_PER_UPDATE LOSS_WEIGHTS CLIP_LIMIT VALIDATION_EVERY
    VALIDATION_STEPS CHECKPOINT_EVERY_EPOCHS CHECKPOINT_EVERY_STEPS CHECKPOINTS_TO_KEEP CPU_REPLICAS
    LOG_EVERY_STEPS PROFILE_START_STEP PROFILE_STEPS LOSSES ADAPT_BATCHES KEPT_OUTSIDE kept_outside learned adapt COLLECTIVE_TIMEOUT_SECONDS np
    load_data load_npz load_tfrecord load_keras_dataset train_pipeline
    validation_pipeline build_datasets build_preprocessing build_augmentation build_model
    build_optimizer WarmUp ScaledOnPlateau build_metrics per_example_losses mean_per_example
    total_loss update_metrics LossWeighting
    skip_everywhere_if_nonfinite clip_across_replicas apply_unless_nonfinite Summaries Profiler
    shard_options layer_map Trainer train_epoch end_epoch fit main""".split()
)


class Weighting(Enum):
    UNIT = "unit"  # the outputs' losses summed
    STATIC = "static"  # fixed weights
    UNCERTAINTY = "uncertainty"  # learned log-variances, trained with the model
    EMA_RATIO = "ema_ratio"  # weights moved toward each loss's share after every update

    @property
    def adaptive(self) -> bool:
        """The script defines a LossWeighting module (checkpointed, its weights in the history)."""
        return self not in (Weighting.UNIT, Weighting.STATIC)

    @property
    def updates_in_step(self) -> bool:
        """The train step calls `LossWeighting.update` after each update."""
        return self is Weighting.EMA_RATIO


class LossTotal(Enum):
    """How the step turns the outputs' per-example losses into the one it optimises."""

    SUM = "sum"  # tf.add_n of the outputs' losses
    WEIGHTED = "weighted"  # the script's total_loss: LOSS_WEIGHTS times each loss
    LEARNED = "learned"  # LossWeighting.total


class ClipKind(Enum):
    """Which `train.gradient_clipping` field is set."""

    GLOBAL_NORM = "global_norm"
    NORM = "norm"
    VALUE = "value"


class SourceType(Enum):
    PYTHON = "python"
    NPZ = "npz"
    TFRECORD = "tfrecord"
    KERAS = "keras"
    SYNTHETIC = "synthetic"


class Part(Enum):
    """Which part of the data a source gives."""

    TRAIN = "train"
    VALIDATION = "validation"


class Module(Enum):
    """Optional modules a script imports (for its data loaders)."""

    NUMPY = "numpy"
    ZIPFILE = "zipfile"


# Modules a source type's loader needs in the script (see templates/_sources.py.jinja).
SOURCE_IMPORTS = {SourceType.NPZ: (Module.NUMPY, Module.ZIPFILE)}


class Batching(Enum):
    BATCH = "batch"
    PADDED = "padded"
    BUCKETED = "bucketed"


class StrategyKind(Enum):
    DEFAULT = "default"
    ONE_DEVICE = "one_device"
    MIRRORED = "mirrored"
    MULTI_WORKER = "multi_worker_mirrored"


class Boundary(Enum):
    """Step counts a chunk of steps must stop at."""

    CHECKPOINT = "checkpoint"
    SUMMARIES = "summaries"
    PROFILE = "profile"


# The enums templates compare view fields against (registered as Jinja globals by name).
TEMPLATE_ENUMS = (
    Placement, Jit, Weighting, LossTotal, ClipKind, SourceType, Part, Module, Batching, StrategyKind, Boundary
)


def literal(value: Any) -> str:
    """A Python literal for plain spec data (str, number, bool, None, list, tuple, dict)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot emit {type(value).__name__} as a literal")


def keras_call(obj: KerasObject | dict, kind: str, extra: dict[str, str] | None = None) -> str:
    """`keras.<namespace>.<Class>(arg=value, ...)`, with nested Keras objects constructed too."""
    if isinstance(obj, dict):
        name, args = obj["type"], {k: v for k, v in obj.items() if k != "type"}
    else:
        name, args = obj.type, obj.args
    parts = [f"{arg}={argument(arg, value)}" for arg, value in args.items()]
    parts += [f"{arg}={code}" for arg, code in (extra or {}).items()]
    return f"{catalog.NAMESPACE[kind]}.{name}({', '.join(parts)})"


def argument(name: str, value: Any) -> str:
    """One constructor argument: a nested Keras object, or a literal."""
    if isinstance(value, dict) and "type" in value:
        return keras_call(value, catalog.nested_kind(name, value["type"]))
    return literal(value)


class LineKind(Enum):
    """What one line of a layer stack does: `target = source`, `target = layer(source)`, or
    `target = Add()([shortcut, source])` (a residual block closing)."""

    ALIAS = "alias"
    LAYER = "layer"
    ADD = "add"


@dataclass
class LayerLine:
    """One line of a layer stack, wired: it reads `source` and assigns `target`."""

    kind: LineKind
    target: str
    source: str
    code: str = ""  # LAYER: the layer's constructor
    shortcut: str = ""  # ADD: the variable the block's input was kept in


# Adapted layers that learn outside variables, and the dtype of the copy the checkpoint keeps.
KEPT_OUTSIDE = {"Discretization": "float32", "IntegerLookup": "int64"}


TEMPLATE_ENUMS += (LineKind,)


def layer_lines(
    items: list, adapted: dict[str, int], mixed: bool = False, *, source: str, variable: str, result: str
) -> list[LayerLine]:
    """The stack's lines, from `source` through `variable` into `result`, the same way for any
    number of layers and residual blocks: the last line assigns `result` (a stack with no layers
    is `result = source`, or no line when they are the same name). Adapted layers are named
    (their `name`, else `adapted_<type>[_n]`) and added to `adapted` ({layer name: batches}),
    which the script finds them by. Under mixed precision they compute in float32: Keras's
    `adapt` fails in float16 (and would overflow)."""
    steps = _stack_steps(items, adapted, mixed, depth=0)
    if not steps:
        return [] if source == result else [LayerLine(LineKind.ALIAS, target=result, source=source)]
    lines = []
    current = source
    for index, step in enumerate(steps):
        if step.kind is LineKind.ALIAS:  # a residual block opens: keep its input
            lines.append(LayerLine(LineKind.ALIAS, target=step.shortcut, source=current))
            continue
        target = result if index == len(steps) - 1 else variable
        lines.append(LayerLine(step.kind, target=target, source=current, code=step.code, shortcut=step.shortcut))
        current = target
    return lines


def _stack_steps(items: list, adapted: dict[str, int], mixed: bool, depth: int) -> list[LayerLine]:
    """The stack's steps in order, not yet wired (targets and sources are filled by layer_lines)."""
    steps = []
    for item in items:
        if isinstance(item, Residual):
            shortcut = "shortcut" if depth == 0 else f"shortcut_{depth + 1}"
            steps.append(LayerLine(LineKind.ALIAS, target="", source="", shortcut=shortcut))
            steps += _stack_steps(item.residual, adapted, mixed, depth + 1)
            steps.append(LayerLine(LineKind.ADD, target="", source="", shortcut=shortcut))
        else:
            code = keras_call(item, "layers", adapted_arguments(item, adapted, mixed))
            steps.append(LayerLine(LineKind.LAYER, target="", source="", code=code))
    return steps


def adapted_arguments(item: Any, adapted: dict[str, int], mixed: bool) -> dict[str, str]:
    """The arguments tfgen adds to an adapted layer's call (its name, float32 under mixed
    precision), recording it in `adapted`; none for other layers."""
    if not getattr(item, "adapt_batches", None):
        return {}
    name = item.args.get("name") or _adapted_name(item.type, adapted)
    adapted[name] = item.adapt_batches
    extra = {} if "name" in item.args else {"name": literal(name)}
    if mixed and "dtype" not in item.args and item.type not in INTEGER_ADAPTED:
        extra["dtype"] = literal("float32")
    return extra


def _adapted_name(layer_type: str, taken: dict[str, int]) -> str:
    """`adapted_normalization`, then `_2`...: Keras never names an unnamed layer `adapted_*`."""
    base = "adapted_" + "".join(f"_{c.lower()}" if c.isupper() else c for c in layer_type).lstrip("_")
    number = 1
    while (base if number == 1 else f"{base}_{number}") in taken:
        number += 1
    return base if number == 1 else f"{base}_{number}"


def float32_head(layers: list) -> list:
    """The head's layers with the last one computing in float32 (losses never run in float16)."""
    if layers and isinstance(layers[-1], KerasObject):
        last = layers[-1]
        if "dtype" in last.args:
            return layers  # an explicit dtype: validation checked it is float32
        return [*layers[:-1], last.model_copy(update={"args": {**last.args, "dtype": "float32"}})]
    return [*layers, KerasObject.model_construct(type="Activation", args={"activation": "linear", "dtype": "float32"})]


@dataclass
class FieldView:
    name: str
    shape: str  # a tuple literal
    dtype: str
    classes: int | None


@dataclass
class Keywords:
    """Keyword arguments from the spec: `name=value` each when every name is an identifier,
    else one `**{...}` (values and the dict are literals)."""

    named: dict[str, str] = field(default_factory=dict)
    unpacked: str | None = None


@dataclass
class SourceView:
    """How one data source is loaded (the data template has a block per `type`)."""

    type: SourceType
    part: Part
    call: str = ""  # python: the `package.module:function` literal
    kwargs: Keywords | None = None  # python: the function's keyword arguments
    path: str = ""
    x: str = ""
    y: str = ""
    features: str = ""  # tfrecord: {name: (shape, dtype)}
    compression: str = "None"
    dataset: str = ""
    split: str = ""


@dataclass
class Cache:
    """`Dataset.cache`: in memory, or in a file."""

    file: str | None = None  # a str literal; None: in memory


@dataclass
class Padding:
    """Options of `Dataset.padded_batch` (literals); None: Keras's default."""

    shapes: str | None = None
    values: str | None = None


@dataclass
class DataView:
    train: SourceView
    validation: SourceView | None
    split: float | None
    stratify: bool
    has_validation: bool
    batch_size: int
    validation_batch_size: int
    shuffle: int | None
    drop_remainder: bool
    cache_train: Cache | None
    cache_validation: Cache | None
    batching: Batching
    padded_batch: Padding | None  # PADDED batching's options
    validation_padded: Padding | None  # None: plain batches
    bucketing: dict[str, str] | None
    preprocess: list[str]
    augment: list[str]
    augment_optional: bool  # train_pipeline(augment=False): the batches adapted layers are fitted on
    layer_input: str  # the input preprocessing and augmentation layers apply to
    placement: Placement
    shard_policy: str | None
    shard_reason: str
    synthetic_train: int
    synthetic_validation: int
    validation_steps: int | None
    imports: frozenset[Module]  # modules the sources' loaders need

    @property
    def memory(self) -> bool:
        return self.placement is not Placement.STREAM

    @property
    def stream(self) -> bool:
        return self.placement is not Placement.MEMORY

    @property
    def maps_layers(self) -> bool:
        """Preprocessing or augmentation layers run on the batches (through `layer_map`)."""
        return bool(self.preprocess or self.augment)

    @property
    def sources(self) -> list[SourceView]:
        return [self.train] + ([self.validation] if self.validation else [])

    @property
    def source_types(self) -> frozenset[SourceType]:
        return frozenset(source.type for source in self.sources)

    @property
    def drawn(self) -> list[SourceView]:
        """Synthetic sources: the same random arrays with or without `--synthetic`."""
        return [source for source in self.sources if source.type is SourceType.SYNTHETIC]

    @property
    def read(self) -> list[SourceView]:
        """Sources read from real data (`--synthetic` draws random arrays instead)."""
        return [source for source in self.sources if source.type is not SourceType.SYNTHETIC]


@dataclass
class OutputView:
    name: str
    layers: list[LayerLine]
    loss: str
    # Keras losses reduce only the last axis; targets of rank >= 2 (e.g. masks) leave more axes,
    # which are averaged per example as Keras's default reduction does.
    mean_per_example: bool
    metrics: list[tuple[str, str]] = field(default_factory=list)  # (history key, constructor)

    @property
    def loss_key(self) -> str:
        """The history key of this output's loss (when there are several outputs)."""
        return f"{self.name}_loss"


@dataclass
class ModelView:
    builder: str | None  # package.module:function
    builder_kwargs: Keywords | None
    only_input: str | None
    trunk: list[LayerLine]
    outputs: list[OutputView]
    adapted: dict[str, int]  # adapted layer name -> training batches (trunk first, then heads)
    kept_outside: dict[str, str]  # adapted layer type -> dtype of the checkpoint's copy (KEPT_OUTSIDE)

    @property
    def several_outputs(self) -> bool:
        return len(self.outputs) > 1

    @property
    def averaged_outputs(self) -> list[OutputView]:
        """Outputs whose losses are averaged over more than the last axis."""
        return [output for output in self.outputs if output.mean_per_example]


@dataclass
class OptimizerView:
    call: str  # the constructor; when the rate is wrapped, it takes the name `learning_rate`
    learning_rate: str  # the rate's own code (a literal or a schedule), which a wrapped rate starts from
    warmup: dict[str, Any] | None
    plateau: dict[str, Any] | None  # ReduceOnPlateau arguments (literals)

    @property
    def wrapped(self) -> bool:
        return self.warmup is not None or self.plateau is not None


@dataclass
class PrecisionView:
    policy: str | None  # None: float32
    loss_scaling: bool
    check_builder_outputs: bool  # a builder model must give float32 outputs

    @property
    def compute_dtype(self) -> str:
        return (self.policy or "float32").removeprefix("mixed_")


@dataclass
class DistributionView:
    kind: StrategyKind
    device: str
    devices: str  # a list literal, or None
    cpu_replicas: int | None  # the default of the script's --cpu-replicas
    communication: str
    timeout: float | None  # multi_worker_mirrored: seconds a collective may wait for a peer

    @property
    def multi_replica(self) -> bool:
        return self.kind in (StrategyKind.MIRRORED, StrategyKind.MULTI_WORKER)


@dataclass
class Clipping:
    kind: ClipKind
    limit: float


@dataclass
class StepView:
    jit: Jit
    accumulation: int
    variable_batches: bool
    allow_unused: bool
    skip_nonfinite: bool
    check_numerics: bool
    clipping: Clipping | None
    weighting: Weighting
    loss_total: LossTotal
    weights: str | None  # LOSS_WEIGHTS literal
    ema_decay: float
    steps_per_execution: int | None
    deterministic: bool

    @property
    def accumulates(self) -> bool:
        """An update sums the gradients of ACCUMULATION_STEPS micro-batches."""
        return self.accumulation > 1


@dataclass
class TrackerArgs:
    """A tracker's arguments: the monitored value, then keyword arguments (literals)."""

    monitor: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class TrackersView:
    early_stopping: TrackerArgs | None
    restore_best: bool
    plateau: TrackerArgs | None
    keep_best: TrackerArgs | None


@dataclass
class CheckpointView:
    every_epochs: int | None  # None: every epoch (or every_steps)
    every_steps: int | None
    keep: int
    resume: bool
    export_keras: bool
    export_saved_model: bool

    @property
    def periodic(self) -> bool:
        """Saves are every N steps or N epochs: the last epoch is saved whatever N."""
        return bool(self.every_steps or self.every_epochs)

    @property
    def exports(self) -> bool:
        return self.export_keras or self.export_saved_model


@dataclass
class Profile:
    start_step: int
    steps: int


@dataclass
class LoggingView:
    tensorboard: bool
    every_steps: int
    profile: Profile | None
    validation_every: int | None  # None: after every epoch (or no validation)


@dataclass
class View:
    header: dict[str, str]
    docstring: list[str]
    name: str
    seed: int
    output_dir: str
    spec_dir: str | None  # the spec's folder relative to the script's, where user modules are
    epochs: int
    inputs: list[FieldView]
    targets: list[FieldView]
    data: DataView
    model: ModelView
    optimizer: OptimizerView
    precision: PrecisionView
    distribution: DistributionView
    step: StepView
    trackers: TrackersView
    checkpoint: CheckpointView
    logging: LoggingView

    @property
    def boundaries(self) -> list[Boundary]:
        """Step counts where a chunk of steps must end (saves, summaries, the profile window)."""
        found = []
        if self.checkpoint.every_steps:
            found.append(Boundary.CHECKPOINT)
        if self.logging.tensorboard:
            found.append(Boundary.SUMMARIES)
        if self.logging.profile:
            found.append(Boundary.PROFILE)
        return found

    @property
    def augment_in_step(self) -> bool:
        return self.data.memory and bool(self.data.augment)

    @property
    def preprocess_in_step(self) -> bool:
        return self.data.memory and bool(self.data.preprocess)

    @property
    def prepare_in_step(self) -> bool:
        """Batches sliced from in-memory arrays are preprocessed or augmented in the step."""
        return self.preprocess_in_step or self.augment_in_step

    @property
    def skip_everywhere(self) -> bool:
        """Keras's LossScaleOptimizer checks one replica's gradients: the verdict is all-reduced."""
        return self.precision.loss_scaling and self.distribution.multi_replica


def make_view(spec: Spec, *, spec_path: str, spec_sha256: str, version: str, spec_dir: str = ".") -> View:
    """`spec_dir`: the spec's folder relative to the script's (POSIX), where the script looks
    for user modules after sys.path and the working directory."""
    adapted: dict[str, int] = {}
    mixed = spec.precision != "float32"
    # The trunk first: its adapted layers come first.
    trunk = layer_lines(spec.model.layers, adapted, mixed, source="x", variable="x", result="x")
    outputs = _outputs(spec, adapted, mixed)
    return View(
        header={"version": version, "spec_path": spec_path, "sha256": spec_sha256},
        docstring=_docstring(spec, outputs),
        name=spec.name,
        seed=spec.seed,
        output_dir=literal(spec.output_dir or f"runs/{spec.name}"),
        spec_dir=literal(spec_dir) if user_functions(spec) else None,
        epochs=spec.train.epochs,
        inputs=[_field(n, i.shape, i.dtype, _input_classes(i)) for n, i in spec.model.inputs.items()],
        targets=[_field(n, t.shape, t.dtype, t.classes) for n, t in spec.targets.items()],
        data=_data(spec, adapted),
        model=_model(spec, trunk, outputs, adapted),
        optimizer=optimizer_view(spec),
        precision=PrecisionView(
            policy=None if spec.precision == "float32" else spec.precision,
            loss_scaling=spec.precision == "mixed_float16",
            check_builder_outputs=spec.precision != "float32" and spec.model.builder is not None,
        ),
        distribution=DistributionView(
            kind=StrategyKind(spec.strategy.type),
            device=literal(spec.strategy.device),
            devices=literal(spec.strategy.devices),
            cpu_replicas=spec.strategy.cpu_replicas,
            communication=spec.strategy.communication.upper(),
            timeout=spec.strategy.timeout_seconds if spec.strategy.type == "multi_worker_mirrored" else None,
        ),
        step=_step(spec, outputs),
        trackers=_trackers(spec),
        checkpoint=CheckpointView(
            every_epochs=_every_epochs(spec),
            every_steps=spec.checkpoint.every_steps,
            keep=spec.checkpoint.keep,
            resume=spec.checkpoint.resume == "auto",
            export_keras="keras" in spec.checkpoint.export,
            export_saved_model="saved_model" in spec.checkpoint.export,
        ),
        logging=LoggingView(
            tensorboard=spec.logging.tensorboard,
            every_steps=spec.logging.every_steps,
            profile=Profile(spec.logging.profile.start_step, spec.logging.profile.steps) if spec.logging.profile else None,
            validation_every=spec.train.validation_every
            if has_validation(spec) and spec.train.validation_every > 1
            else None,
        ),
    )


def _every_epochs(spec: Spec) -> int | None:
    every = spec.checkpoint.every_epochs
    return every if not spec.checkpoint.every_steps and every and every > 1 else None


def _input_classes(item) -> int | None:
    """Synthetic integer inputs draw from [0, vocabulary) (or {0, 1} with no vocabulary)."""
    if item.vocabulary:
        return item.vocabulary
    return None if item.dtype in ("uint8", "bool", *FLOAT_DTYPES) else 2


def _field(name: str, shape: list, dtype: str, classes: int | None) -> FieldView:
    return FieldView(name=name, shape=literal(tuple(shape)), dtype=dtype, classes=classes)


def _outputs(spec: Spec, adapted: dict[str, int], mixed: bool) -> list[OutputView]:
    metrics: dict[str, list[tuple[str, str]]] = {}
    for output, key, metric in metric_keys(spec):
        metrics.setdefault(output, []).append((key, keras_call(metric, "metrics")))
    views = []
    for name in output_names(spec):
        head = list(spec.model.outputs.get(name, []))
        if mixed and spec.model.builder is None:
            head = float32_head(head)
        views.append(
            OutputView(
                name=name,
                layers=layer_lines(head, adapted, mixed, source="x", variable="h", result=f"outputs[{literal(name)}]"),
                loss=keras_call(spec.losses[name], "losses", {"reduction": "None"}),
                mean_per_example=len(spec.targets[name].shape) >= 2,
                metrics=metrics.get(name, []),
            )
        )
    return views


def _source(source, part: Part) -> SourceView:
    kind = SourceType(source.type)
    if kind is SourceType.PYTHON:
        return SourceView(kind, part, call=literal(source.function), kwargs=_kwargs(source.kwargs))
    if kind is SourceType.NPZ:
        return SourceView(kind, part, path=literal(source.path), x=literal(source.x), y=literal(source.y))
    if kind is SourceType.TFRECORD:
        features = {name: (tuple(f.shape), f.dtype) for name, f in source.features.items()}
        return SourceView(
            kind, part, path=literal(source.files), features=literal(features), compression=literal(source.compression)
        )
    if kind is SourceType.KERAS:
        return SourceView(kind, part, dataset=literal(source.dataset), split=literal(source.split))
    return SourceView(kind, part)  # synthetic: drawn from SYNTHETIC_*_EXAMPLES


def _kwargs(kwargs: dict[str, Any]) -> Keywords | None:
    """Keyword arguments as `name=value` when every key is an identifier, else `**{...}`;
    None: no arguments."""
    if not kwargs:
        return None
    if all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
        return Keywords(named={k: literal(v) for k, v in kwargs.items()})
    return Keywords(unpacked=literal(kwargs))


def _data(spec: Spec, adapted: dict[str, int]) -> DataView:
    train, validation = spec.data.train, spec.data.validation
    validation_batch = (validation.batch_size if validation else None) or train.batch_size
    if train.bucket_by_sequence_length:
        batching = Batching.BUCKETED
    elif train.padded_batch:
        batching = Batching.PADDED
    else:
        batching = Batching.BATCH
    variable = batching is not Batching.BATCH
    shard_policy, shard_reason = _shard_policy(spec)
    bucket = train.bucket_by_sequence_length
    sources = [train.source] + ([validation.source] if validation else [])
    return DataView(
        train=_source(train.source, Part.TRAIN),
        validation=_source(validation.source, Part.VALIDATION) if validation else None,
        split=spec.data.validation_split,
        stratify=spec.data.stratify,
        has_validation=has_validation(spec),
        batch_size=train.batch_size,
        validation_batch_size=validation_batch,
        shuffle=train.shuffle,
        drop_remainder=train.drop_remainder,
        cache_train=_cache(train.cache),
        cache_validation=_cache(validation.cache) if validation else None,
        batching=batching,
        padded_batch=_padded(spec, train.padded_batch),
        validation_padded=_validation_padded(spec, variable),
        bucketing={
            "input": literal(bucket.input or next(iter(spec.model.inputs))),
            "boundaries": literal(bucket.boundaries),
            "batch_sizes": literal(bucket.batch_sizes),
        }
        if bucket
        else None,
        preprocess=[keras_call(layer, "layers") for layer in train.preprocess],
        augment=[keras_call(layer, "layers") for layer in train.augment],
        augment_optional=bool(adapted and train.augment),
        layer_input=next(iter(spec.model.inputs)),
        placement=resolve_in_memory(spec),
        shard_policy=shard_policy,
        shard_reason=shard_reason,
        synthetic_train=train.source.examples if train.source.type == "synthetic" else 16 * train.batch_size,
        synthetic_validation=validation.source.examples
        if validation and validation.source.type == "synthetic"
        else 4 * validation_batch,
        validation_steps=spec.train.validation_steps,
        imports=frozenset(m for s in sources for m in SOURCE_IMPORTS.get(SourceType(s.type), ())),
    )


def _model(spec: Spec, trunk: list[LayerLine], outputs: list[OutputView], adapted: dict[str, int]) -> ModelView:
    types = {item.type for item in model_layers(spec) if getattr(item, "adapt_batches", None)}
    return ModelView(
        builder=spec.model.builder,
        builder_kwargs=_kwargs(spec.model.kwargs),
        only_input=literal(next(iter(spec.model.inputs))) if len(spec.model.inputs) == 1 else None,
        trunk=trunk,
        outputs=outputs,
        adapted=adapted,
        kept_outside={t: dtype for t, dtype in KEPT_OUTSIDE.items() if t in types},
    )


def optimizer_view(spec: Spec) -> OptimizerView:
    optimizer = spec.optimizer
    rate = optimizer.args.get("learning_rate")
    rate_code = keras_call(rate, "schedules") if isinstance(rate, dict) else literal(rate)
    warmup = spec.train.warmup
    plateau = spec.train.reduce_on_plateau
    call = keras_call(optimizer, "optimizers")
    if warmup is not None or plateau is not None:  # the script's WarmUp/ScaledOnPlateau wrap the rate
        others = [f"{arg}={argument(arg, value)}" for arg, value in optimizer.args.items() if arg != "learning_rate"]
        call = f"keras.optimizers.{optimizer.type}({', '.join(['learning_rate=learning_rate', *others])})"
    return OptimizerView(
        call=call,
        learning_rate=rate_code,
        warmup={"steps": warmup.steps, "initial": literal(warmup.initial)} if warmup else None,
        plateau={k: literal(v) for k, v in plateau.model_dump().items()} if plateau else None,
    )


def _step(spec: Spec, outputs: list[OutputView]) -> StepView:
    clip = spec.train.gradient_clipping
    clipping = None
    if clip is not None:
        kind = next(k for k in ClipKind if getattr(clip, k.value) is not None)
        clipping = Clipping(kind, getattr(clip, kind.value))
    weights = {o.name: spec.losses[o.name].weight for o in outputs}
    if spec.loss_weighting.type != "static":
        weighting = Weighting(spec.loss_weighting.type)
    elif all(w == 1.0 for w in weights.values()):
        weighting = Weighting.UNIT
    else:
        weighting = Weighting.STATIC
    train = spec.data.train
    return StepView(
        jit=resolve_jit(spec),
        accumulation=spec.train.gradient_accumulation_steps,
        variable_batches=not train.drop_remainder or train.bucket_by_sequence_length is not None,
        allow_unused=spec.train.allow_unused_variables,
        skip_nonfinite=spec.train.on_nonfinite == "skip",
        check_numerics=spec.debug.check_numerics,
        clipping=clipping,
        weighting=weighting,
        loss_total=_loss_total(weighting),
        weights=None if weighting is Weighting.UNIT else literal(weights),
        ema_decay=spec.loss_weighting.decay,
        steps_per_execution=None if spec.train.steps_per_execution == "auto" else spec.train.steps_per_execution,
        deterministic=spec.deterministic,
    )


def _loss_total(weighting: Weighting) -> LossTotal:
    if weighting.adaptive:
        return LossTotal.LEARNED
    return LossTotal.WEIGHTED if weighting is Weighting.STATIC else LossTotal.SUM


def _trackers(spec: Spec) -> TrackersView:
    stopping = spec.train.early_stopping
    early = None
    if stopping is not None:
        defaults = {"patience": None, "mode": "auto", "min_delta": 0.0, "baseline": None, "start_from_epoch": 0}
        changed = {k: literal(getattr(stopping, k)) for k, d in defaults.items() if getattr(stopping, k) != d}
        early = TrackerArgs(literal(stopping.monitor), changed)
    plateau = spec.train.reduce_on_plateau
    keep = spec.checkpoint.keep_best
    return TrackersView(
        early_stopping=early,
        restore_best=bool(stopping and stopping.restore_best_weights),
        plateau=_plateau_args(plateau) if plateau else None,
        keep_best=TrackerArgs(literal(keep.monitor), {"mode": literal(keep.mode)} if keep.mode != "auto" else {})
        if keep
        else None,
    )


def _plateau_args(plateau) -> TrackerArgs:
    options = {k: literal(v) for k, v in plateau.model_dump().items() if k != "monitor"}
    return TrackerArgs(literal(plateau.monitor), options)


def user_functions(spec: Spec) -> list[tuple[tuple[str, ...], str]]:
    """The `package.module:function` references the script imports, with their spec fields."""
    parts = ["train"] + (["validation"] if spec.data.validation else [])
    sources = [(("data", part, "source", "function"), getattr(spec.data, part).source) for part in parts]
    found = [(loc, source.function) for loc, source in sources if source.type == "python"]
    return found + ([(("model", "builder"), spec.model.builder)] if spec.model.builder else [])


def _docstring(spec: Spec, outputs: list[OutputView]) -> list[str]:
    source = spec.data.train.source
    described = {
        "python": f"`{getattr(source, 'function', '')}`",
        "npz": "arrays from an .npz file",
        "tfrecord": "TFRecord files",
        "synthetic": f"{getattr(source, 'examples', 0)} random examples",
        "keras": f"`keras.datasets.{getattr(source, 'dataset', '')}` ({getattr(source, 'split', '')} split)",
    }[source.type]
    model = f"built by `{spec.model.builder}`" if spec.model.builder else f"{len(spec.model.layers)} shared layers"
    heads = ", ".join(f"`{o.name}` ({spec.losses[o.name].type})" for o in outputs)
    held_out = "stratified " if spec.data.stratify else ""
    return [
        f"Train `{spec.name}` with a custom TensorFlow training loop.",
        "",
        f"Data: {described}" + (f"; a {held_out}random part held out for validation." if spec.data.validation_split else "."),
        f"Model: {model}; outputs {heads}.",
        f"Optimizer: {spec.optimizer.type}" + ("; early stopping." if spec.train.early_stopping else "."),
    ]


def _shard_policy(spec: Spec) -> tuple[str | None, str]:
    if spec.strategy.type != "multi_worker_mirrored":
        return None, ""
    policy = spec.data.shard_policy
    if policy == "auto":
        if spec.data.train.source.type == "tfrecord":
            return "FILE", "whole files per worker, for a file source"
        return "DATA", "every worker reads all and keeps its share, for an in-memory source"
    return policy.upper(), "as the spec sets `data.shard_policy`"


def _padded(spec: Spec, padded) -> Padding | None:
    """The options of padded_batch (features, targets); None: no padding."""
    if padded is None:
        return None
    groups = [spec.model.inputs, spec.targets]
    shapes = values = None
    if padded.padded_shapes:
        per_group = [{n: tuple(padded.padded_shapes.get(n, item.shape)) for n, item in g.items()} for g in groups]
        shapes = literal(tuple(per_group))
    if padded.padding_values:
        per_group = [
            {
                n: (float if item.dtype.startswith(("float", "bfloat")) else int)(padded.padding_values.get(n, 0))
                for n, item in g.items()
            }
            for g in groups
        ]
        values = literal(tuple(per_group))
    return Padding(shapes=shapes, values=values)


def _validation_padded(spec: Spec, variable: bool) -> Padding | None:
    """padded_batch options for validation batches; None: plain batches."""
    validation = spec.data.validation
    if validation is not None and validation.padded_batch is not None:
        return _padded(spec, validation.padded_batch)
    return Padding() if variable else None


def _cache(cache: bool | str) -> Cache | None:
    if cache is False:
        return None
    return Cache(file=literal(cache) if isinstance(cache, str) and cache else None)
