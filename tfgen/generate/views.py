"""The typed view of a script: what the templates lay out (no spec, no decisions here).

One root, View (the templates' `v`), holds every other view. Views are plain data: the planner
(tfgen.generate.plan and the *_plan modules) computes every field once, each choice the
templates make named as one field (tests/generate/test_templates_decide_nothing.py).

Each field carries data, each choice an enum; templates compare against the enums by member
(`x is sameas Jit.GPU`), registered as Jinja globals from TEMPLATE_ENUMS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tfgen.generate.decisions import Jit, Placement


class Weighting(Enum):
    UNIT = "unit"  # the outputs' losses summed
    STATIC = "static"  # fixed weights
    UNCERTAINTY = "uncertainty"  # learned log-variances, trained with the model
    EMA_RATIO = "ema_ratio"  # weights moved toward each loss's share after every update


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


class Part(Enum):
    """Which part of the data a source gives."""

    TRAIN = "train"
    VALIDATION = "validation"
    TEST = "test"


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


class LineKind(Enum):
    """What one line of a layer stack does: `target = source`, `target = layer(source)`, or
    `target = Add()([shortcut, source])` (a residual block closing)."""

    ALIAS = "alias"
    LAYER = "layer"
    ADD = "add"


@dataclass(frozen=True)
class LayerLine:
    """One line of a layer stack, wired: it reads `source` and assigns `target`."""

    kind: LineKind
    target: str
    source: str
    code: str = ""  # LAYER: the layer's constructor
    shortcut: str = ""  # ADD: the variable the block's input was kept in


@dataclass(frozen=True)
class FieldView:
    name: str
    shape: str  # a tuple literal
    dtype: str
    classes: int | None
    names: str | None = None  # a tuple literal of the class names, in id order


@dataclass(frozen=True)
class Keywords:
    """Keyword arguments from the spec: `name=value` each when every name is an identifier,
    else one `**{...}` (values and the dict are literals)."""

    named: dict[str, str] = field(default_factory=dict)
    unpacked: str | None = None


@dataclass(frozen=True)
class SourceView:
    """How one data source is loaded (planned by its unit, tfgen/sources/<type>/plan.py)."""

    type: str  # the spec's `type:` (a registered source, tfgen/sources/__init__.py)
    part: Part
    call: str = ""  # python: the `package.module:function` literal
    kwargs: Keywords | None = (
        None  # python: the function's keyword arguments; tfds: data_dir, x, y; image_folder: its options
    )
    path: str = ""  # npz: the file; tfrecord: the pattern; image_folder, text_folder: the directory
    x: str = ""
    y: str = ""
    features: str = ""  # tfrecord: {name: (shape, dtype)}
    compression: str = "None"
    dataset: str = ""  # keras, tfds: the dataset's name
    split: str = ""
    predict: PredictView | None = None  # the predict and evaluate commands (None: the script has none)
    options: list[str] = field(default_factory=list)  # csv: `name=literal` keyword arguments not at their default
    read_call: str = ""  # load_data's call that reads it (tfgen.generate.source_plan)
    draw_line: str = ""  # load_data's line that draws random arrays for its part instead


@dataclass(frozen=True)
class Cache:
    """`Dataset.cache`: in memory, or in a file."""

    arguments: str = ""  # of `rt.cached` after the source: none in memory; a file, what made it


@dataclass(frozen=True)
class Padding:
    """Options of `Dataset.padded_batch` (literals); None: Keras's default."""

    shapes: str | None = None
    values: str | None = None


@dataclass(frozen=True)
class HeldOut:
    """`rt.held_out`'s call: the names its three parts are assigned to, and its keyword arguments."""

    names: str  # "train, validation, test" with `_` for a part the split does not give
    arguments: str  # "validation=VALIDATION_SPLIT, test=TEST_SPLIT, stratify=True", as the split has them


@dataclass(frozen=True)
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
    test: SourceView | None = None  # a test source of its own
    test_split: float | None = None
    has_test: bool = False  # a test source, or test_split: the final model is tested
    test_batch_size: int = 0
    synthetic_test: int = 0
    held_out: HeldOut | None = None  # None: rt.split_arrays holds out the validation rows (or nothing is held out)
    splits_beside_test: bool = False  # load_data splits the validation rows off before returning a test part
    decodes_in_order: bool = False  # a folder's files decoded in order (not shuffled first)
    preprocessed_input: bool = False  # the script defines `preprocessed`: the model's input after preprocessing
    source_templates: list[str] = field(default_factory=list)  # each used unit's source.py.jinja
    imports_zipfile: bool = False  # the script imports zipfile (for load_npz)
    drawn: list[SourceView] = field(default_factory=list)  # synthetic sources: random arrays, --synthetic or not
    read: list[SourceView] = field(default_factory=list)  # sources read from real data (--synthetic draws instead)
    # rt.listed: the part comes from a folder source, a file list decoded as it streams.
    lists_train_files: bool = False
    lists_validation_files: bool = False  # the validation source's, or the training one's (validation_split)
    lists_test_files: bool = False  # the test source's, or the training one's (test_split)
    split_function: str = "split_arrays"  # the rt function holding the validation rows out of the training ones
    returns: str = ""  # what load_data returns (tfgen.generate.plan_data.load_data_returns)
    shuffles_files: bool = False  # a folder's (path, label) pairs are shuffled, then decoded (cached: decoded first)
    maps_layers: bool = False  # preprocessing or augmentation layers run on the batches (through `layer_map`)
    # Batches sliced from in-memory arrays are preprocessed or augmented in the step.
    preprocess_in_step: bool = False
    augment_in_step: bool = False
    prepare_in_step: bool = False  # either of them


@dataclass(frozen=True)
class OutputView:
    name: str
    layers: list[LayerLine]
    loss: str
    # Keras losses reduce only the last axis; targets of rank >= 2 (e.g. masks) leave more axes,
    # which are averaged per example as Keras's default reduction does.
    mean_per_example: bool
    loss_key: str  # the history key of this output's loss (when there are several outputs)
    metrics: list[tuple[str, str]] = field(default_factory=list)  # (history key, constructor)


@dataclass(frozen=True)
class BranchView:
    """One input's own layers: from `inputs[name]` into `branches[name]`."""

    input: str  # the input's name (an identifier)
    lines: list[LayerLine]


@dataclass(frozen=True)
class ModelView:
    builder: str | None  # package.module:function
    builder_kwargs: Keywords | None
    branches: list[BranchView]  # in the inputs' order
    start: LayerLine  # assigns the trunk's `x`: the one input or branch, or the merge of several
    preprocessed: LayerLine | None  # the model's input: what the preprocessing layers give (None: declared)
    merge_comment: str | None  # what the merge joins, and how (several inputs)
    trunk: list[LayerLine]
    outputs: list[OutputView]
    adapted: dict[str, int]  # adapted layer name -> training batches (trunk first, then heads)
    vocabulary_copies: dict[str, str]  # a lookup sized by its vocabulary -> its copy's constructor call
    kept_outside: dict[str, str]  # adapted layer type -> dtype of the checkpoint's copy (KEPT_OUTSIDE)
    adapts_strings: bool  # an adapted layer learns a vocabulary of strings (StringLookup, TextVectorization)
    several_outputs: bool  # losses and metrics are keyed by output
    # The history keys of the per-example losses (several outputs' losses, and an algorithm's beside
    # them): build_metrics makes a Mean for each. `logged_apart`: (key, loss) of the algorithm's
    # losses that update_metrics updates one by one (one output: it logs no output's loss).
    loss_keys: list[str]
    logged_apart: list[tuple[str, str]]
    averaged_outputs: list[OutputView]  # outputs whose losses are averaged over more than the last axis
    # Some layer may add a loss term (add_loss): the script finds which and logs each by its layer's name.
    layer_losses: bool


@dataclass(frozen=True)
class OptimizerView:
    call: str  # the constructor; when the rate is wrapped, it takes the name `learning_rate`
    learning_rate: str  # the rate's own code (a literal or a schedule), which a wrapped rate starts from
    warmup: dict[str, Any] | None
    plateau: dict[str, Any] | None  # ReduceOnPlateau arguments (literals)
    scaled_by_phase: bool  # the rate is wrapped in ScaledByPhase: some phase scales it
    rate_wrapped: bool  # warmup, a plateau or a phase wraps the rate: built as `learning_rate` first
    parameters: str  # build_optimizer's parameters: what scales the rate (plateau, phase_factor)
    arguments: str  # the Trainer's arguments to build_optimizer, one per parameter
    docstring: list[str]  # build_optimizer's docstring lines (none: nothing scales the rate)


@dataclass(frozen=True)
class PrecisionView:
    policy: str | None  # None: float32
    loss_scaling: bool
    warns_without_gpu: bool  # float16 is for GPUs: on a CPU the script says it is slower there
    check_builder_outputs: bool  # a builder model must give float32 outputs
    compute_dtype: str  # what the layers compute in


@dataclass(frozen=True)
class DistributionView:
    kind: StrategyKind
    device: str
    devices: str  # a list literal, or None
    cpu_replicas: int | None  # the default of the script's --cpu-replicas
    communication: str
    timeout: float | None  # multi_worker_mirrored: seconds a collective may wait for a peer
    multi_replica: bool  # each replica computes a part of the batch's gradients
    lines: list[str]  # main's lines that make `strategy`


@dataclass(frozen=True)
class Clipping:
    kind: ClipKind
    limit: float


@dataclass(frozen=True)
class StepView:
    jit: Jit
    accumulation: int
    accumulates: bool  # an update sums the gradients of ACCUMULATION_STEPS micro-batches
    variable_batches: bool
    allow_unused: bool
    skip_nonfinite: bool
    stops_on_nonfinite: bool  # a non-finite loss stops the run (on_nonfinite is not `skip`)
    check_numerics: bool
    clipping: Clipping | None
    clip_line: str  # clip_across_replicas's clipping of the summed `gradients` (none: not clipped)
    weighting: Weighting
    weighting_module: bool  # the script defines a LossWeighting module (checkpointed, its weights in the history)
    updates_weighting: bool  # the train step calls `LossWeighting.update` after each update
    loss_total: LossTotal
    loss_total_code: str  # the per-example loss optimised, from the outputs' `task_losses`
    weights: str | None  # LOSS_WEIGHTS literal
    ema_decay: float
    steps_per_execution: int | None
    deterministic: bool
    # Loss scaling across replicas, no clipping: the step sums the gradients itself (Keras's
    # LossScaleOptimizer checks the gradients it is given: summed, they hold every replica's).
    sums_for_loss_scale: bool
    # Clipped, or summed for loss scaling: applied by rt.apply_reduced, not summed again.
    gradients_summed_across_replicas: bool
    keeps_task_losses: bool  # an accumulating step keeps the last part's losses (recorded, or weighed)
    sharpness_aware: float | None  # SAM's rho: the step takes its gradient again at the worst weights
    optimised_loss: str  # what tape.gradient differentiates: `scaled_loss` under float16 loss scaling, else `loss`
    compile_lines: list[str]  # the train step's XLA decorator and why (or why not), above its `def`
    state_losses: str  # RunState's argument: the names of the step's per-example losses


@dataclass(frozen=True)
class TrackerArgs:
    """A tracker's arguments: the monitored value, then keyword arguments (literals)."""

    monitor: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackersView:
    early_stopping: TrackerArgs | None
    restore_best: bool
    plateau: TrackerArgs | None
    keep_best: TrackerArgs | None
    best_weights: bool  # the best weights are kept (for keep_best or restore_best)


@dataclass(frozen=True)
class CheckpointView:
    every_epochs: int | None  # None: every epoch (or every_steps)
    every_steps: int | None
    keep: int
    fresh: bool  # `resume: never`: every run discards the previous one
    exports: str  # the literal list of exports rt.export writes: ["keras", "saved_model"], or fewer
    periodic: bool  # saves are every N steps or N epochs: the last epoch is saved whatever N


@dataclass(frozen=True)
class Profile:
    start_step: int
    steps: int


@dataclass(frozen=True)
class LoggingView:
    tensorboard: bool
    gradient_norm: bool  # TensorBoard shows the step's gradient norm (the supervised step's)
    every_steps: int
    profile: Profile | None
    validation_every: int | None  # None: after every epoch (or no validation)
    report: bool  # the script writes report.html at the end of its run
    confusion: str | None  # the split of confusion.json ("test", "validation"); None: no class target or data
    confusion_batches: str | None  # the validation batches' expression (None: the test batches, made already)
    confusion_logits: str  # `, logits=(names,)`: the two-class targets whose outputs are logits; or ""


@dataclass(frozen=True)
class ExampleWeightsView:
    """The weights of each training example's loss (tfgen.generate.example_weights)."""

    class_weights: str | None  # the CLASS_WEIGHTS literal: {target: {class id: weight} or "balanced"}
    sample_weight: str | None  # the literal name of the training source's array or column
    npz_weights: bool  # load_npz reads an array of example weights
    used: bool  # the step weighs the examples' losses


@dataclass(frozen=True)
class Binding:
    """`name = <code>` at the top of the function that uses it: `rt.function(reference,
    SPEC_DIR, place)` for a loss (`rt.per_example_loss` makes it), else
    `rt.own_object(reference, SPEC_DIR, place, places)`, which names the spec's place of a
    constructor call that raises. `place` is the kind of Keras object it must be (`layers`,
    `losses`, ...: rt.imports)."""

    name: str
    code: str


@dataclass(frozen=True)
class CustomView:
    """The bindings of each script function that builds Keras objects (tfgen.generate.custom_plan)."""

    model: list[Binding]
    preprocess: list[Binding]
    augment: list[Binding]
    losses: list[Binding]  # any: the losses are made by `build_losses()` (once), not at import
    metrics: list[Binding]
    optimizer: list[Binding]
    losses_code: str  # what the script's code reads the losses from


@dataclass(frozen=True)
class DistillationView:
    """`algorithm: {type: distillation}`: the teacher's file and the loss's two numbers (literals)."""

    teacher: str
    temperature: str
    student_loss_weight: str


@dataclass(frozen=True)
class PhaseView:
    phases: list[str]  # each phase's `rt.Phase(...)`
    rate_factor: bool  # some phase scales the rate (the optimizer's rate is wrapped)


@dataclass(frozen=True)
class RuntimeView:
    """The runtime the script imports (tfgen-runtime), checked before anything else."""

    version: str  # the version the script was generated for
    missing: str  # the line the script prints when no runtime can be imported
    vendored: bool  # `--vendor`: the copy beside the script, found before an installed one


@dataclass(frozen=True)
class PredictView:
    """The script's `predict` and `evaluate` commands (tfgen.generate.predict_plan)."""

    read_call: str | None  # read_new_data's call: the training source's, on `path` (None: refused)
    refusal: str  # the line run_command raises when read_call is None
    path_note: str  # read_new_data's docstring: what `path` is, when not a file or folder
    pipeline: str  # the script's pipeline that batches new data in order
    logits: str  # LOGITS: the class targets whose outputs are logits
    total: str  # rt.evaluate_model's `total=` argument (weighted losses), else ""


@dataclass(frozen=True)
class View:
    header: dict[str, str]
    runtime: RuntimeView
    made_by: str  # the script's MADE_BY: its spec, the spec's sha256 (SPEC_SHA256), data files, tfgen
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
    weights: ExampleWeightsView
    custom: CustomView
    # Where a chunk of steps must end (saves, summaries, the profile window): the steps left to each.
    chunk_ends: list[str]
    phases: PhaseView | None  # `train.phases` (None: none)
    distillation: DistillationView | None  # `algorithm: {type: distillation}` (None: another algorithm)
    # The script's constants, line by line: before INPUTS (SPEC_DIR..STEPS_PER_EXECUTION) and
    # after TARGETS (SYNTHETIC_TRAIN_EXAMPLES..PROFILE_STEPS); tfgen.generate.constants_plan.
    settings: list[str] = field(default_factory=list)
    predict: PredictView | None = None  # the predict and evaluate commands (None: the script has none)
    options: list[str] = field(default_factory=list)  # the options' defaults, before TensorFlow's import
    parse_arguments: str = ""  # rt.parse_args's arguments after argv
    run_settings: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)  # beside keras, tf and rt: an algorithm's (numpy)


# The enums templates compare view fields against (registered as Jinja globals by name).
TEMPLATE_ENUMS = (
    Placement,
    Jit,
    Weighting,
    LossTotal,
    ClipKind,
    Part,
    Batching,
    StrategyKind,
    Boundary,
    LineKind,
)
