"""The spec reference's prose: what a field's description cannot say (see tfgen/spec/reference.py)."""

HEADER = """
# Spec reference

Every field of a tfgen spec, with its type, default and an example value. This page is generated
from the spec's pydantic models (`tfgen/spec/`), the same models `tfgen schema` prints as a JSON
Schema, by `python scripts/generate_spec_reference.py`; a test fails when it is out of date.
[Back to the README](../README.md).

A field's dotted path is what `--set` takes (`--set model.layers.2.units=256`): `<i>` stands for
a list index, `<name>` and `<output>` for a key you choose (an input, a target, an output).
Defaults and examples are written in YAML; `null` is "not set", and a field whose default is
`required` must be given.
"""

WRITING = """
## Writing a spec

Keras objects are written the way Keras names them: `{type: <Keras class>, <argument>: value}`,
or a bare class name when there are no arguments. Nested Keras objects work the same way
(`kernel_regularizer: {type: L2, l2: 0.001}`, `learning_rate: {type: CosineDecay, ...}`).

**Your own objects.** Wherever a Keras class is taken (layers of the trunk, heads, residual
blocks, branches, `preprocess` and `augment`; losses, metrics, and nested regularizers,
initializers, constraints and learning-rate schedules), `type: "my_layers:Scale"` names a class
of yours (`package.module:Name`), found as `python` sources and builders are: on `sys.path`, in
the working directory, then next to the spec. It must be that kind of Keras class (a layer place
takes a `keras.layers.Layer` subclass, a metric place a `keras.metrics.Metric` one, ...), from a
module of the project or of keras or tensorflow (any module with `--trust`); a loss may also be a
function of a module of the project. This is checked before anything is constructed.
Its arguments are passed as keyword arguments and are not typed (`validate` never imports it;
`validate --deep` builds it, and a constructor that refuses an argument is a located error). The
script binds it where it uses it (`Scale = rt.function("my_layers:Scale", SPEC_DIR, "layers")` at the top
of `build_model`). A loss may be a `keras.losses.Loss` subclass (made with `reduction=None`) or a
plain function `(y_true, y_pred, **arguments) -> one loss per example` (both cast to the
predictions' dtype, as Keras calls a loss function); values with more axes are averaged per
example, and the step averages over the global batch, so it is right across replicas (a function
that returns one value for the batch is an error). A metric's history key is its `name`, else its
class name in snake case (`F1Score` -> `f1_score`). The optimizer is a Keras class. A nested
object of yours is written `{type: "module:Name"}` (a bare string there is a Keras name).
Unknown keys are errors everywhere. YAML is loaded safely (no tags), and every value that lands in
the generated code is emitted as a Python literal; names (inputs, outputs, the run) must be ASCII
Python identifiers that are not keywords (the run's starts with a letter; TensorFlow refuses
other letters, such as `π`, in the scope names Keras makes from them). Values the script cannot
write are refused (`.nan`/`.inf` in any argument, a `seed` of 2**32 or more), and so is a spec
whose history keys would collide: a metric named `epoch`, `lr` or `loss`, two metrics with the
same key, a metric key equal to an output's `<output>_loss`, or a name starting with `val_` (the
prefix of validation values), each located at the name.

**Typed arguments.** Keras arguments are checked by value too, without TensorFlow, wherever a
Keras object appears (trunk, residual blocks, heads, `preprocess`/`augment`, losses, metrics,
the optimizer and its schedule, nested initializers, regularizers and constraints):
`units: "16"` or `units: 0` gives `spec.yaml:18:5: model.layers.1.units: Dense expects a positive
integer, got "16"; write the number without quotes`, `activation: relux` suggests `relu`,
`learning_rate: fast` expects a float or a schedule, `rate: 1.5` on `Dropout` a number between 0
and 1, `kernel_initializer: he_normall` suggests `he_normal`, and `l2: "1e-4"` asks for the number
without quotes (unquoted, `1e-4` is a number: tfgen reads YAML 1.2's exponents). Each argument's
type is recorded in `tfgen/spec/keras_catalog.json` by `scripts/extract_keras_catalog.py`: nested
objects, activations and their names (`he_normal`) from Keras's own lookup tables; integers,
numbers (with the bounds a docstring states: "between 0 and 1", ">= 0", "positive"), booleans,
and integer-or-list arguments (`kernel_size`) from the docstring's first words checked against the
default; string choices (`padding`, `data_format`, `interpolation`, `fill_mode`, `output_mode`,
...) only where Keras itself refuses other strings, probed by building the object. An argument
whose type cannot be known accepts anything: a false error is worse than a missed one (a slow test
builds about 4,200 typed values with Keras and checks that no value Keras takes is refused). After
upgrading Keras, refresh the catalog with `python scripts/extract_keras_catalog.py`;
`tests/spec/test_catalog.py` fails until it matches the installed Keras.

Specs start with `# yaml-language-server: $schema=../tfgen.schema.json`, so editors with the YAML
language server complete and check them, and show the descriptions below.
"""

TOP_LEVEL = """
`extends` merges the spec it names under this one: mappings merge key by key, this spec's values
win, and lists are replaced whole. The header's sha256 of a generated script covers the resolved
spec (after `extends` and `--set`), so `tfgen check` calls a file stale when what the spec means
changed, not when a comment did.
"""

# After the sources' own paragraphs (each unit's `docs`, tfgen/sources/<type>/__init__.py).
DATA = """
**Test data** (`data.test` or `data.test_split`) is evaluated once, after training, on the final
model (the best epoch's weights when the run restores them) with the validation step under the
run's strategy: one `Test:` line, and `test.json` in the output folder. With `validation_split`,
`test_split` takes its rows from the other end of the same seeded order, so the validation rows
are the ones `validation_split` alone holds out.

**Variable-length data.** A `null` in `model.inputs.<name>.shape` or `targets.<output>.shape`
marks a variable-length dimension. Such examples are batched by `data.train.padded_batch` (each
batch padded to its longest example, or to `padded_shapes`) or by
`data.train.bucket_by_sequence_length` (examples of similar length batched together, each bucket
with its own batch size, padded per bucket; the loss averages over the real example count).
Validation batches are padded with 0 to their longest example unless
`data.validation.padded_batch` says otherwise. Integer inputs give their `vocabulary`, so that
synthetic data draws valid ids.

**Preprocessing that changes an example.** `data.train.preprocess` layers take the declared input
(what the source gives, checked against it) and may change its shape or dtype: a `Resizing`, or a
`TextVectorization` with a `vocabulary` on a string input. The model's input is what they give
(`preprocessed()` in the script), and `--deep` checks both sides. `augment` layers must keep the
shape (they run on training batches only). The exported model takes preprocessed examples: for a
model that takes raw strings, put `TextVectorization` in `model.layers` (with `adapt: true`).
"""

MODEL = """
**Strings and class names.** `dtype: string` declares an input of strings (`shape: []`: one per
example; `vocabulary`: how many words synthetic strings draw from). Strings reach the rest of the
model through `TextVectorization`, `StringLookup` or `Hashing` (`--deep` says where they reach
another layer). A model with a string input streams its data through `tf.data` (`in_memory: true`
is an error) and its step is never XLA-compiled (XLA has no string type; `jit_compile: true` is an
error). A target is never `string`: a class target lists its names instead, `classes: [circle,
square, stripes]` (ids are the list order; the dtype defaults to int32), and string labels from a
source are mapped to those ids: an unknown label is one line, naming it and its row (arrays:
before the first step; a dataset's labels are checked as they stream).

**Several inputs.** A layer-list model takes any number of inputs. `model.branches` gives an
input its own layers (`{features: [{type: Normalization, adapt: true}]}`, the same items as
`layers`); an input without a branch is used as it is. `model.merge` joins the inputs, after their
branches, into the trunk's one input: `concatenate` (the default: on the last axis; equal ranks and
equal dimensions but the last), `add`, `average` or `multiply` (equal shapes). `build_model()`
shows each branch, the merge, the trunk and the heads in that order. A string input of several
needs a branch that turns it into numbers (`StringLookup`, `TextVectorization` or `Hashing`). A
branch for an input the model does not have, `merge` with one input, and `branches` or `merge`
with a `builder` are located errors; `--deep` builds the branches and names the one whose output
the merge cannot join.
`data.train.preprocess` and `augment` apply to one input, so not to a model of several.

**Adapted layers.** `- {type: Normalization, adapt: true}` standardises with the mean and
variance of the training data instead of numbers written in the spec (`adapt` is a tfgen key, not
a Keras argument). `main()` adapts each such layer once, before the first step, in the strategy's
scope: on the first N batches of `train_pipeline` (shuffled as the first epoch; after
`preprocess`, never augmented, never validation data; the same batches on the in-memory and
tf.data paths and on every worker), fed through the layers before it, so a layer deeper in the
stack adapts on what reaches it. It prints `Adapted adapted_normalization on 14 training batches`.
The statistics are variables of the model: the checkpoints and `model.keras` hold them, and a
resumed run restores them instead of adapting again. An adapted layer is named `adapted_<type>`
unless it has a `name`, and computes in float32 under mixed precision (Keras's `adapt` fails in
float16). `build_model()` alone gives it unadapted (mean 0, variance 1).

`Discretization` (with `num_bins`: quantile bin boundaries) and `IntegerLookup` (its vocabulary,
the most frequent values first) adapt the same way, e.g. `- {type: Discretization, num_bins: 8,
adapt: true}`. Keras 3.15 keeps what they learn outside variables, so the script keeps a copy in
the checkpoint (`rt.kept_outside`, one variable per such layer); a resumed run puts the boundaries
or vocabulary back into the layer before the first step instead of adapting, and `model.keras`
holds them (Discretization's config, the lookups' vocabulary assets). `StringLookup` and
`TextVectorization` adapt their vocabulary the same way, on a `dtype: string` input (on a model
without one, `adapt` on them is a located error), and the exported `model.keras` takes raw
strings. An adapted `IntegerLookup`, `StringLookup` or `TextVectorization` with `output_mode:
one_hot`, `multi_hot` or `count` is as wide as its vocabulary, as when Keras adapts it, then builds
the model: the script adapts a copy of it before building the model to find that size (on the same
training batches), and run.json records it (`vocabulary_sizes`), so a resumed run builds the same
model; `max_tokens` caps the vocabulary, and with `pad_to_max_tokens: true` the width is `max_tokens`
(`tf_idf` weights are not kept, so refused). `adapt` on a
layer with no statistics, with the arguments it computes (`mean`, `bin_boundaries`,
`vocabulary`), or on a `data.train.preprocess`/`augment` layer (not part of the model, so not
checkpointed) is a located error. `tests/e2e/test_adapt.py` chains `Normalization` → `Discretization`
→ `IntegerLookup` → `Embedding` on the tabular data, SIGKILLs the run after its second checkpoint
and checks that the resumed run adapts nothing, has the same boundaries and vocabulary (those a
fresh layer learns from the same training batches, not the validation rows) and ends
bit-identical to an uninterrupted run; and the same kill and resume under MirroredStrategy on the
tf.data path (two workers are tested with `Normalization` only).
"""

TRAIN = """
**`jit_compile: auto`** compiles the per-replica step with XLA only where all of these hold: the
strategy is `default` or `one_device` (XLA under MirroredStrategy failed on CPU devices, so an
explicit `true` there is a validation error); `debug.check_numerics` is off; the model has no
`IntegerLookup`, `StringLookup` or `TextVectorization` layer (XLA cannot compile their hash-table
lookup; `true` with one is a validation error); and batch shapes do not vary (no bucketing, no
padding without `padded_shapes`). Then a convolutional model (or a `model.builder` model, whose
layers tfgen cannot see) is compiled under `mixed_float16` (float16 has no fast CPU kernels: XLA
was about 2.5x faster) and, in float32, only where a GPU is visible (on CPU, oneDNN's convolutions
beat XLA's); any other model is compiled for runs of at least 1,000 steps (`--epochs` x steps per
epoch: the compile takes about a second, so a shorter run is faster without it).

**`steps_per_execution: auto`** starts at 100 steps per call and doubles while a call takes under
0.25 s: fewer Python round trips in short epochs, and a stop signal still waits under half a
second.
"""

ALGORITHM = """
What each step does: `supervised` (the default) trains the model on a loss per output against its
target. `distillation` also runs a frozen teacher, loaded from its file when the script starts, on
the same (augmented) batch: the step minimises `student_loss_weight` times the student's losses
plus `1 - student_loss_weight` times the KL divergence from the teacher's softened outputs (times
T^2), and logs `student_loss` and `distillation_loss` beside `loss`. The student's outputs named as
the teacher's (or the one output of each) are distilled; the student alone is exported. See
[algorithms](algorithms.md#distillation).
"""

STRATEGY = """
`ParameterServerStrategy`, `TPUStrategy` and `CentralStorageStrategy` are located validation errors
that name the supported strategies: tfgen writes synchronous data-parallel loops and runs none of
those in its tests.

`batch_size` is always the global batch; the per-replica batch is derived and printed. Model,
optimizer, metrics and checkpoint are created in `strategy.scope()`, and the optimizer's slots are
built there when the trainer is created: before a checkpoint restore fills them, and before the
first step (a lazy build inside the first distributed step fails under a multi-replica strategy).
Under `multi_worker_mirrored` only the chief writes the history, the final model and the real
checkpoint directory; the other workers write to temporary directories they delete, and every
worker restores from the chief's directory. Under a multi-replica strategy with `mixed_float16`, a
non-finite gradient on any replica skips the step on every replica (Keras 3.15 checks one replica
only).
"""

CHECKPOINT = """
The checkpoint holds everything the run's future depends on: model, optimizer (slots, loss scale),
epoch, step within the epoch and steps run, the epoch's training metrics so far, the dropout and
in-step augmentation RNG states, loss-weighting, plateau, early-stopping and best-kept state. The
data position is `(epoch, step)`: the in-memory path's order is a stateless permutation per epoch,
and the tf.data path's shuffle is seeded per epoch and resumed with `.skip(step)` (on any
strategy); its `augment` layers draw from a key of `(seed, epoch, batch index)`, never from a
state of their own, so a resumed epoch augments its remaining batches as the uninterrupted run
did (on every source; a custom layer too, when it draws through a `keras.random.SeedGenerator`). So a run killed at any moment (SIGKILL) and started again with the same command ends
with exactly the weights of an uninterrupted run (bit-identical on CPU with `deterministic: true`).
SIGTERM or SIGINT finishes the running steps, saves, prints where it stopped and exits 143 / 130.
A corrupt or partial newest checkpoint gives a warning naming it, and the one before is used.
`history.jsonl` is rewritten atomically after the checkpoint it describes and cut back to the
restored checkpoint on resume, so no epoch is lost or repeated. `run.json` records the spec
path and sha256 that produced the run.
"""
