"""A run's directory (`RunDirectory`): where it reads and writes, what made it, the
previous run it resumes or discards, and its history (`History`)."""

import atexit
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import keras
import tensorflow as tf

from .errors import UserError
from .files import FileExamples, class_names, first_examples
from .folders import hold, is_tfgen_run, remove
from .regular_files import is_remote, open_regular, read_regular, write_whole

# What --fresh removes: the run's state and its exports.
RUN_FILES = (
    "checkpoints",
    "history.jsonl",
    "run.json",
    "model.keras",
    "saved_model",
    "tensorboard",
    "test.json",
    "confusion.json",
    "report.html",
    "report",
    # What a kill while exporting may leave (see exports.py).
    "model.partial.keras",
    "saved_model.partial",
    "saved_model.old",
    "run.json.partial",
    "test.json.partial",
    "confusion.json.partial",
    "report.html.partial",
)


class RunDirectory:
    """Where a run reads (`output`) and writes (`write`).

    Off the chief, `write` is scratch: the chief's files alone are kept, yet every
    worker saves, as saving is collective.

    Args:
        args: the script's parsed command line.
        strategy: the tf.distribute strategy.
        global_batch_size: the batch over all replicas (split evenly between them).
        made_by: what generated the script: `spec`, `spec_sha256` and `tfgen`.
    """

    def __init__(self, args, strategy, global_batch_size, *, made_by):
        replicas = strategy.num_replicas_in_sync
        if global_batch_size % replicas:
            split = f"does not split into {replicas} replicas"
            raise UserError(f"batch_size {global_batch_size} {split}")
        share = global_batch_size // replicas
        batches = f"global batch {global_batch_size}, {share} per replica"
        print(f"{replicas} replica(s): {batches}")
        self.args = args
        self.made_by = dict(made_by)
        self.output = Path(args.output_dir)
        self.chief = strategy.extended.should_checkpoint  # or worker 0 without a chief
        self.write = self.output
        self.class_names = {}  # {target: [names]}, set by `data`
        self.class_weights = {}  # {target: [weight by class id]}, set by the script
        self.vocabulary_sizes = {}  # {layer name: size}, set by `vocabulary_sizes`
        if self.chief:  # before anything in the folder is read or written
            hold(self.output)
        else:  # removed on any exit but SIGKILL (a stop signal exits)
            self.write = Path(tempfile.mkdtemp(prefix="tfgen-worker-"))
            atexit.register(shutil.rmtree, self.write, ignore_errors=True)

    def data(self, data, targets):
        """`(train, validation)` as this run uses it: the first --max-examples of each.

        The class names of `targets` known (listed, or given by a folder source) go in
        run.json.
        """
        n = self.args.max_examples
        if n is not None:
            first = [None if part is None else first_examples(part, n) for part in data]
            data = tuple(first)
        require_examples(*data)
        self.class_names = class_names(data, targets)
        return data

    def resume(self, checkpoint, argv, fresh=False):
        """Restore the run into `checkpoint` (a `RunCheckpoint`), or refuse one of another
        spec or model; return its `History` (`finished`: nothing is left to train).

        `fresh` (or --fresh) discards the previous run first.
        """
        start_over = fresh or self.args.fresh
        if start_over:
            self.discard()
        rows = history_lines(self.output / "history.jsonl")
        directory = self.output / "checkpoints"
        spec_sha256 = self.made_by["spec_sha256"]
        checkpoint.restore(directory, spec_sha256, not start_over, facts=self.facts)
        if rows and checkpoint.restored is None and saved_any(directory):
            why = f"has {rows} history rows but no checkpoint in {directory} reads back"
            raise UserError(f"{self.output} {why}: --fresh starts over")
        epoch = checkpoint.epoch()
        history = History(self.output, self.write, last_epoch=epoch)
        history.finished = self.finished(checkpoint, epoch)
        if history.finished:
            return history
        self.write.mkdir(parents=True, exist_ok=True)
        self.record(argv)
        checkpoint.open(self.write / "checkpoints")
        return history

    def finished(self, checkpoint, epoch):
        """Whether the restored run has nothing left to train (saying why)."""
        stopped = checkpoint.stopped_early()
        epochs = self.args.epochs
        if not stopped and epoch < epochs:
            return False
        why = "early stopping" if stopped else f"--epochs {epochs}"
        more = "--fresh starts over, a larger --epochs trains on"
        print(f"Already finished at epoch {epoch} ({why}); nothing to do: {more}")
        return True

    @functools.cached_property
    def facts(self):
        """What identifies the run beyond its spec (in its checkpoints and run.json):
        whether its data is --synthetic, and the data files' fingerprints."""
        synthetic = self.args.synthetic and not self.made_by.get("all_synthetic")
        facts = {"synthetic": synthetic}
        if not synthetic:
            facts["data"] = fingerprints(self.made_by.get("data_files", []))
        return facts

    def record(self, argv):
        """run.json: what made the script, the run's facts, the versions it runs on, its
        arguments, the class names known, the class weights and the vocabulary sizes (a
        partial file, then renamed)."""
        if argv is None:
            argv = sys.argv[1:]
        versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
        record = {**self.made_by, **self.facts, **versions, "argv": list(argv)}
        if self.class_names:
            record["class_names"] = self.class_names
        if self.class_weights:
            record["class_weights"] = self.class_weights
        if self.vocabulary_sizes:  # a resumed run builds its model with them
            record["vocabulary_sizes"] = self.vocabulary_sizes
        write_whole(self.write / "run.json", json.dumps(record, indent=2) + "\n")

    def discard(self):
        """--fresh: remove the previous run's files (then say what they were).

        Only from a folder holding none of them, or a run of tfgen's own (its run.json).
        """
        found = [self.output / n for n in RUN_FILES if os.path.lexists(self.output / n)]
        if not found or not self.chief:
            return
        names = ", ".join(path.name for path in found)
        if not is_tfgen_run(self.output / "run.json"):
            mine = f"--fresh removes only a run of tfgen's own (its run.json): {names} stay"
            raise UserError(f"{self.output} is not a tfgen run; {mine}")
        for path in found:
            remove(path)
        print(f"--fresh: discarded the previous run in {self.output} ({names})")


def history_lines(path):
    """How many rows (non-blank lines) `path` holds (0: no file); UserError naming it when
    it is not UTF-8 text, or not a regular file of at most `RUN_FILE_CAP` bytes."""
    try:
        text = read_regular(path).decode("utf-8")
    except FileNotFoundError:
        return 0
    except UnicodeDecodeError as error:
        where = f"byte {error.start}"
        ways = "move it away, or pass --fresh to start over"
        raise UserError(f"{path} is not UTF-8 text ({where}): {ways}") from None
    return sum(1 for line in text.splitlines() if line.strip())


def saved_any(directory):
    """Whether `directory` holds any checkpoint file (`checkpoint`, `ckpt-*`)."""
    return (directory / "checkpoint").exists() or any(directory.glob("ckpt-*"))


def fingerprints(patterns):
    """The fingerprint of each file the glob `patterns` match, in order."""
    files = []
    for pattern in patterns:
        files += sorted(tf.io.gfile.glob(pattern))
    return [fingerprint(file) for file in files]


def fingerprint(path):
    """A cheap fingerprint of a data file: its path, size, mtime and first MiB's sha256
    (UserError naming a file that is not a regular one)."""
    try:
        file = tf.io.gfile.GFile(path, "rb") if is_remote(path) else open_regular(path)
        with file:
            status = tf.io.gfile.stat(path)
            head = hashlib.sha256(file.read(2**20)).hexdigest()
    except (OSError, tf.errors.OpError) as error:
        why = getattr(error, "strerror", None) or type(error).__name__
        raise UserError(f"cannot read the data file {path}: {why}") from None
    return {
        "path": path,
        "size": status.length,
        "mtime_ns": status.mtime_nsec,
        "sha256_first_mib": head,
    }


def require_examples(train, validation):
    """UserError when the validation data (arrays, a dataset or None) has no example (when
    the training arrays have none either, the batch check says so, naming the batch)."""
    if isinstance(train, tuple) and not len(next(iter(train[1].values()))):
        return
    if isinstance(validation, tuple):
        empty = not len(next(iter(validation[1].values())))
    elif isinstance(validation, tf.data.Dataset):
        empty = validation.cardinality() == 0
    elif isinstance(validation, FileExamples):
        empty = not len(validation)
    else:
        empty = False
    if empty:
        raise UserError("the validation data is empty: give it examples")


class History:
    """history.jsonl: one JSON object per epoch, rewritten atomically each epoch."""

    def __init__(self, read_from, write_to, last_epoch):
        """The rows in `read_from` up to `last_epoch` (later ones are redone)."""
        self.path = Path(write_to) / "history.jsonl"
        self.rows = []
        self.finished = False
        source = Path(read_from) / "history.jsonl"
        if not source.exists():
            return
        text = read_regular(source).decode("utf-8")  # (checked: `history_lines`)
        for number, line in enumerate(text.splitlines(), 1):
            row = history_row(line, f"{source} line {number}", last_epoch)
            if row is not None:
                self.rows.append(row)

    def append(self, row):
        """Add the row of an epoch; rewrite the file (a partial one, then renamed)."""
        self.rows.append(row)
        write_whole(self.path, "".join(json.dumps(row) + "\n" for row in self.rows))


def history_row(line, where, last_epoch):
    """One line of history.jsonl as a row (None: of an epoch after `last_epoch`), or
    UserError naming `where` it is."""
    try:
        row = json.loads(line)
        kept = row["epoch"] <= last_epoch
    except (ValueError, TypeError, KeyError, IndexError):
        ways = "move it away, or pass --fresh to start over"
        raise UserError(f"{where} is not a history row: {ways}") from None
    if not kept:
        return None
    return row
