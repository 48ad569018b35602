"""What every training script that tfgen writes shares (no spec here): the `tfgen-runtime` library.

Scripts `import tfgen_runtime as rt` and use the names in `__all__` (the runtime's public API:
no script reaches another); each module holds one concern:

- `version`: the runtime's version, and the check a script runs before anything else
- `options`: the command line's options, read before TensorFlow is imported
- `startup`: TensorFlow imported with its start-up lines kept off stderr
- `cli`: `run`, which makes a user's mistake one line
- `devices`: the devices a strategy runs on, and a warning for float16 on a CPU
- `errors`: `UserError`
- `imports`: the user's functions and classes a spec names, each checked for its place
- `custom`: the user's own classes (their errors located), losses made per-example, a
  builder's one-tensor model keyed
- `caches`: one dataset per source for every epoch (`cache_files`: `cache:`, a cache
  file kept only for the data it was made of)
- `augmentation`: random augmentation in tf.data, its draws keyed by (seed, epoch, batch)
- `contrastive`: two views of each example, NT-Xent over the global batch, SimSiam's loss,
  the linear probe
- `data`: the declared fields, sources checked against them, synthetic data, splits
- `strings`: string inputs, string labels mapped to their class ids, random strings
- `class_weights`: class and example weights, found once and applied to the losses
- `npz_files`: .npz files opened once checked (regular, a zip, arrays within its size)
- `tfrecords`: TFRecord files read and parsed once before training
- `tfds_source`: TensorFlow Datasets (the `tfds` extra), streamed in stored order
- `csv_files`: CSV files read into memory or streamed, every row checked first
- `csv_rows`: a CSV file's rows parsed, and checked naming the row and column
- `held_out`: the rows held out for validation and the test (seeded, disjoint)
- `evaluation`: the final model's evaluation on the test data (test.json)
- `predictions`: a finished run's model on new data: `predict` (one row an example) and
  `evaluate` (evaluation.json)
- `confusion`: each class target's confusion matrix on the test (else validation) data
  (confusion.json)
- `run_report`: report.html, of one run or several (`report_plots`: its PNGs, matplotlib)
- `files`: folder sources (one sub-folder per class): listed, split, read as they stream
- `class_folders`: a folder source's class folders and files (each file once, in one class)
- `image_headers`: the size an image file declares, capped before it is decoded
- `regular_files`: run and data files read only when regular, run files never written
  through links
- `run_dir`: the run directory (resume, --fresh, run.json) and its history
- `folders`: the run folder's lock, and what --fresh may remove
- `checkpoint`: the run's checkpoint, its identity and restore
- `checkpoint_files`: the checkpoints a run's folder holds (never a forged state file's)
- `exports`: the final model's files, written whole or not at all
- `state`: where the run is (`RunState`)
- `carry`: the figures the steps of one call carry, folded in once per call
- `reduced`: gradients summed across replicas once, applied without a second sum
- `steps`: a custom step's context (`StepContext`) and its returned figures checked
- `trainer`: the loops around a script's steps (`StandardTrainer`)
- `moving_statistics`: BatchNormalization's moving statistics averaged over the replicas
  after every step
- `model_checks`: weights to train, gradients that reach them, the regularization loss
- `layer_losses`: the terms layers add (`add_loss`), each logged by its layer's name
- `sharpness`: sharpness-aware minimisation's ascent, and the gradients at the worst weights
- `phases`: training phases (frozen layers, a rate factor), each with its own traced step
- `applications`: `keras.applications` backbones on the shape of their input
- `input_wait`: how long a streamed run's steps wait for their input (measured once)
- `trackers`: early stopping, the plateau factor, the best epoch's weights
- `signals`: stop signals (save and exit)
- `report`: history values, the epoch line, the progress bar
- `vocabularies`: lookups whose width is their adapted vocabulary's size, found before the model
"""

import importlib
import sys
import types

from .version import __version__, require_version

# Each module and the public names it holds. A module is imported when a script first uses one
# of its names (PEP 562), so that `tfgen_runtime.version`, the check every script runs first,
# is imported without TensorFlow.
PUBLIC = {
    "applications": ("application",),
    "augmentation": ("augmented",),
    "cache_files": ("cached",),
    "caches": ("as_dataset",),
    "checkpoint": ("RunCheckpoint", "read_whole", "refuse_another_run"),
    "checkpoint_files": ("checkpoint_paths",),
    "class_weights": (
        "SAMPLE_WEIGHT",
        "class_weights",
        "weigh_losses",
        "with_sample_weights",
    ),
    "cli": ("run",),
    "confusion": ("confusion_counts", "write_confusion"),
    "contrastive": (
        "linear_probe",
        "nt_xent",
        "nt_xent_other_view",
        "simsiam_loss",
        "two_views",
    ),
    "csv_files": ("CsvStream", "read_csv"),
    "custom": ("keyed_inputs", "own_object", "per_example_loss"),
    "data": (
        "Field",
        "checked_arrays",
        "first_rows",
        "from_function",
        "named_examples",
        "split_arrays",
        "synthetic_arrays",
    ),
    "devices": (
        "existing_device",
        "make_deterministic",
        "mirrored_devices",
        "warn_if_float16_on_cpu",
    ),
    "errors": ("UserError",),
    "evaluation": ("checked_test_data", "evaluate_test"),
    "exports": ("export", "save_keras"),
    "files": (
        "decoded",
        "image_folder",
        "listed",
        "shuffle_buffer",
        "split_files",
        "text_folder",
    ),
    "held_out": ("held_out",),
    "imports": ("function",),
    "layer_losses": ("layer_loss_names", "layer_losses", "with_layer_losses"),
    "model_checks": (
        "regularization_loss",
        "require_gradients",
        "require_weights",
        "summed_losses",
        "variable_path",
    ),
    "npz_files": ("open_npz",),
    "options": ("parse_args", "positive"),
    "phases": ("Phase", "PhasedTrainer", "PhasePlan"),
    "predictions": (
        "named_targets",
        "trained_model",
        "write_evaluation",
        "write_predictions",
    ),
    "reduced": (
        "apply_reduced",
        "apply_unless_nonfinite",
        "scaled_gradients",
        "summed_scaled_gradients",
    ),
    "report": ("epoch_line", "metric_values", "progress_bar"),
    "run_dir": ("History", "RunDirectory"),
    "run_report": ("report_run", "write_report"),
    "sharpness": ("gradients_at", "worst_weights"),
    "signals": ("StopSignals",),
    "startup": ("import_tensorflow",),
    "state": ("RunState",),
    "steps": ("StepContext", "checked_logs"),
    "strings": ("label_ids",),
    "tfds_source": ("load_tfds",),
    "tfrecords": ("checked_tfrecords",),
    "trackers": ("EarlyStopping", "KeepBest", "ReduceOnPlateau"),
    "trainer": ("COMPILE_FROM_STEPS", "StandardTrainer"),
    "vocabularies": ("vocabulary_sizes",),
}
HOMES = {name: module for module, names in PUBLIC.items() for name in names}


def __getattr__(name):
    """A public name (from its module), or a module of the package, imported on first use."""
    if name in HOMES:
        value = getattr(importlib.import_module(f".{HOMES[name]}", __name__), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *HOMES])


class Package(types.ModuleType):
    """This package, whose public names win over its modules of the same name (`class_weights`,
    `held_out`): importing a module binds it on the package, which would hide the name.
    """

    def __setattr__(self, name, value):
        if not (name in HOMES and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = Package


__all__ = [
    "COMPILE_FROM_STEPS",
    "SAMPLE_WEIGHT",
    "CsvStream",
    "EarlyStopping",
    "Field",
    "History",
    "KeepBest",
    "Phase",
    "PhasePlan",
    "PhasedTrainer",
    "ReduceOnPlateau",
    "RunCheckpoint",
    "RunDirectory",
    "RunState",
    "StandardTrainer",
    "StepContext",
    "StopSignals",
    "UserError",
    "__version__",
    "application",
    "apply_reduced",
    "apply_unless_nonfinite",
    "as_dataset",
    "augmented",
    "cached",
    "checked_arrays",
    "checked_logs",
    "checked_test_data",
    "checked_tfrecords",
    "checkpoint_paths",
    "class_weights",
    "confusion_counts",
    "decoded",
    "epoch_line",
    "evaluate_test",
    "existing_device",
    "export",
    "first_rows",
    "from_function",
    "function",
    "gradients_at",
    "held_out",
    "image_folder",
    "import_tensorflow",
    "keyed_inputs",
    "label_ids",
    "layer_loss_names",
    "layer_losses",
    "linear_probe",
    "listed",
    "load_tfds",
    "make_deterministic",
    "metric_values",
    "mirrored_devices",
    "named_examples",
    "named_targets",
    "nt_xent",
    "nt_xent_other_view",
    "open_npz",
    "own_object",
    "parse_args",
    "per_example_loss",
    "positive",
    "progress_bar",
    "read_csv",
    "read_whole",
    "refuse_another_run",
    "regularization_loss",
    "report_run",
    "require_gradients",
    "require_version",
    "require_weights",
    "run",
    "save_keras",
    "scaled_gradients",
    "shuffle_buffer",
    "simsiam_loss",
    "split_arrays",
    "split_files",
    "summed_losses",
    "summed_scaled_gradients",
    "synthetic_arrays",
    "text_folder",
    "trained_model",
    "two_views",
    "variable_path",
    "vocabulary_sizes",
    "warn_if_float16_on_cpu",
    "weigh_losses",
    "with_layer_losses",
    "with_sample_weights",
    "worst_weights",
    "write_confusion",
    "write_evaluation",
    "write_predictions",
    "write_report",
]
