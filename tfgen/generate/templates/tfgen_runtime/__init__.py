"""What every training script that tfgen writes beside this package shares (no spec here).

Scripts `import tfgen_runtime as rt` and use the names below; each module holds one
concern:

- `cli`: the command line, and `run`, which makes a user's mistake one line
- `devices`: the devices a strategy runs on, and a warning for float16 on a CPU
- `errors`: `UserError`
- `imports`: the user's functions and classes a spec names, each checked for its place
- `custom`: the user's own classes (their errors located), losses made per-example, a
  builder's one-tensor model keyed
- `caches`: one dataset per source for every epoch (`cache_files`: `cache:`, a cache
  file kept only for the data it was made of)
- `augmentation`: random augmentation in tf.data, its draws keyed by (seed, epoch, batch)
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
- `trainer`: the loops around a script's steps (`StandardTrainer`)
- `model_checks`: weights to train, gradients that reach them, the regularization loss
- `phases`: training phases (frozen layers, a rate factor), each with its own traced step
- `applications`: `keras.applications` backbones on the shape of their input
- `input_wait`: how long a streamed run's steps wait for their input (measured once)
- `trackers`: early stopping, the plateau factor, the best epoch's weights
- `signals`: stop signals (save and exit)
- `report`: history values, the epoch line, the progress bar
- `vocabularies`: lookups whose width is their adapted vocabulary's size, found before the model
"""

from .applications import application
from .augmentation import augmented
from .cache_files import cached
from .caches import as_dataset
from .checkpoint import RunCheckpoint, read_whole, refuse_another_run
from .checkpoint_files import checkpoint_paths
from .class_weights import (
    SAMPLE_WEIGHT,
    class_weights,
    weigh_losses,
    with_sample_weights,
)
from .cli import parse_args, positive, run
from .csv_files import CsvStream, read_csv
from .custom import keyed_inputs, own_object, per_example_loss
from .data import (
    Field,
    checked_arrays,
    first_rows,
    from_function,
    named_examples,
    split_arrays,
    synthetic_arrays,
)
from .devices import existing_device, mirrored_devices, warn_if_float16_on_cpu
from .errors import UserError
from .evaluation import checked_test_data, evaluate_test
from .exports import export
from .files import (
    decoded,
    image_folder,
    listed,
    shuffle_buffer,
    split_files,
    text_folder,
)
from .held_out import held_out
from .imports import function
from .model_checks import (
    regularization_loss,
    require_gradients,
    require_weights,
    variable_path,
)
from .npz_files import open_npz
from .phases import Phase, PhasedTrainer, PhasePlan
from .reduced import apply_reduced
from .report import epoch_line, metric_values, progress_bar
from .run_dir import History, RunDirectory
from .signals import StopSignals
from .state import RunState
from .strings import label_ids
from .tfds_source import load_tfds
from .tfrecords import checked_tfrecords
from .trackers import EarlyStopping, KeepBest, ReduceOnPlateau
from .trainer import COMPILE_FROM_STEPS, StandardTrainer
from .vocabularies import vocabulary_sizes

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
    "StopSignals",
    "UserError",
    "application",
    "apply_reduced",
    "as_dataset",
    "augmented",
    "cached",
    "checked_arrays",
    "checked_test_data",
    "checked_tfrecords",
    "checkpoint_paths",
    "class_weights",
    "decoded",
    "epoch_line",
    "evaluate_test",
    "existing_device",
    "export",
    "first_rows",
    "from_function",
    "function",
    "held_out",
    "image_folder",
    "keyed_inputs",
    "label_ids",
    "listed",
    "load_tfds",
    "metric_values",
    "mirrored_devices",
    "named_examples",
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
    "require_gradients",
    "require_weights",
    "run",
    "shuffle_buffer",
    "split_arrays",
    "split_files",
    "synthetic_arrays",
    "text_folder",
    "variable_path",
    "vocabulary_sizes",
    "warn_if_float16_on_cpu",
    "weigh_losses",
    "with_sample_weights",
]
