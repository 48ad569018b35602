"""A run's directory (`RunDirectory`): where it reads and writes, what made it, the
previous run it resumes or discards, and its history (`History`)."""

import atexit
import errno
import fcntl
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import keras
import tensorflow as tf

from .data import first_rows
from .errors import UserError

# What --fresh removes: the run's state and its exports.
RUN_FILES = (
    "checkpoints",
    "history.jsonl",
    "run.json",
    "model.keras",
    "saved_model",
    "tensorboard",
)
# Held (flock) by the run writing the folder, for as long as its process lives.
LOCK_FILE = ".tfgen.lock"
HELD = {}  # folder (resolved) -> the descriptor of its lock file, held by this process


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
        if self.chief:  # before anything in the folder is read or written
            hold(self.output)
        else:  # removed on any exit but SIGKILL (a stop signal exits)
            self.write = Path(tempfile.mkdtemp(prefix="tfgen-worker-"))
            atexit.register(shutil.rmtree, self.write, ignore_errors=True)

    def data(self, data):
        """`(train, validation)` as this run uses it: the first --max-examples of each."""
        n = self.args.max_examples
        if n is not None:
            data = tuple(None if part is None else first_rows(part, n) for part in data)
        require_examples(*data)
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
        checkpoint.restore(directory, self.made_by["spec_sha256"], not start_over)
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

    def record(self, argv):
        """run.json: what made the script, the versions it runs on, its arguments."""
        if argv is None:
            argv = sys.argv[1:]
        versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
        record = {**self.made_by, **versions, "argv": list(argv)}
        (self.write / "run.json").write_text(json.dumps(record, indent=2) + "\n")

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


def hold(folder):
    """Hold `folder` for this process (an exclusive flock of its lock file, released by the
    OS on any exit); UserError naming the pid when another run holds it."""
    folder.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(folder)
    if key in HELD:  # main() run again in this process
        return
    path = folder / LOCK_FILE
    descriptor = open_lock_file(path)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(descriptor)
        wait = "wait for it to end, or pass another --output-dir"
        raise UserError(
            f"{folder} is in use by another run (pid {pid}): {wait}"
        ) from None
    HELD[key] = descriptor
    if fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR:
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)


def open_lock_file(path):
    """A descriptor of the lock file `path` (created if missing); read-only in a folder that
    cannot be written (a finished run still says so there; a read-only one still locks).
    """
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        if (
            error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS)
            or not path.exists()
        ):
            raise
    return os.open(path, os.O_RDONLY)


def remove(path):
    """Remove the file, link or folder `path`; UserError naming what could not be removed."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, onerror=not_removed)
        else:
            path.unlink()
    except OSError as error:
        not_removed(None, path, (type(error), error, None))


def not_removed(function, path, info):
    """`shutil.rmtree`'s error handler: UserError naming `path` and why."""
    why = getattr(info[1], "strerror", None) or type(info[1]).__name__
    stop = "fix that and pass --fresh again"
    raise UserError(f"{path}: cannot be removed ({why}); {stop}") from None


def is_tfgen_run(path):
    """Whether `path` is a run.json that tfgen wrote (its `tfgen` and `spec_sha256` keys)."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"tfgen", "spec_sha256"} <= record.keys()


def history_lines(path):
    """How many rows (non-blank lines) `path` holds (0: no file); UserError naming it when
    it is not UTF-8 text."""
    try:
        text = path.read_bytes().decode("utf-8")
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


def require_examples(train, validation):
    """UserError when the validation data (arrays, a dataset or None) has no example (when
    the training arrays have none either, the batch check says so, naming the batch)."""
    if isinstance(train, tuple) and not len(next(iter(train[1].values()))):
        return
    if isinstance(validation, tuple):
        empty = not len(next(iter(validation[1].values())))
    elif isinstance(validation, tf.data.Dataset):
        empty = validation.cardinality() == 0
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
        for number, line in enumerate(source.read_text().splitlines(), 1):
            row = history_row(line, f"{source} line {number}", last_epoch)
            if row is not None:
                self.rows.append(row)

    def append(self, row):
        """Add the row of an epoch; rewrite the file (a partial one, then renamed)."""
        self.rows.append(row)
        partial = self.path.with_suffix(".jsonl.partial")
        partial.write_text("".join(json.dumps(row) + "\n" for row in self.rows))
        partial.replace(self.path)


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
