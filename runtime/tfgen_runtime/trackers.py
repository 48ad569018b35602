"""Trackers of one monitored history value, as the Keras callbacks: early stopping,
the learning rate's plateau factor, and the best epoch's weights."""

import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

from .checkpoint import CORRUPT, read_whole
from .exports import replace_folder

MAXIMISED = ("acc", "auc", "precision", "recall", "iou")  # `mode: auto` maximises these


class Tracker(tf.Module):
    """The best value seen of one monitored history key (as the Keras callbacks)."""

    def __init__(self, monitor, mode, min_delta):
        super().__init__()
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        if mode == "auto":  # as Keras: accuracy-like metrics are maximised
            name = monitor.removeprefix("val_")
            maximise = any(word in name for word in MAXIMISED)
            mode = "max" if maximise else "min"
        self.mode = mode
        initial = math.inf if mode == "min" else -math.inf
        self.best = tf.Variable(initial, dtype="float64")

    def improves(self, value, reference=None):
        """Whether `value` beats `reference` (the best; none yet: NaN) by min_delta."""
        if reference is None:
            reference = float(self.best.numpy())
        if math.isnan(reference):
            return True
        if self.mode == "min":
            return value + self.min_delta < reference
        return value - self.min_delta > reference


class EarlyStopping(Tracker):
    """Stop when `monitor` has not improved for `patience` epochs.

    As keras.callbacks.EarlyStopping: `baseline` is the value to beat before the wait
    resets, and the epochs up to `start_from_epoch` are not tracked.
    """

    def __init__(
        self,
        monitor,
        patience=0,
        mode="auto",
        min_delta=0.0,
        baseline=None,
        start_from_epoch=0,
    ):
        super().__init__(monitor, mode, min_delta)
        self.patience = patience
        self.baseline = baseline
        self.start_from_epoch = start_from_epoch
        self.best.assign(math.nan)  # as Keras: the first value is the best so far
        self.wait = tf.Variable(0, dtype=tf.int64)
        self.stopped = tf.Variable(False)

    def update(self, row, epoch):
        """Track this epoch's value; True when it is the best so far."""
        value = row.get(self.monitor)
        if value is None or epoch <= self.start_from_epoch:
            return False
        self.wait.assign_add(1)
        if self.improves(value):
            self.best.assign(value)
            if self.baseline is None or self.improves(value, self.baseline):
                self.wait.assign(0)
            return True
        if self.wait.numpy() >= self.patience and epoch > 1:
            self.stopped.assign(True)
        return False

    @property
    def should_stop(self):
        return bool(self.stopped.numpy())

    def message(self):
        waited = self.wait.numpy()
        return f"Early stopping: {self.monitor} did not improve for {waited} epochs"


class ReduceOnPlateau(Tracker):
    """Scale the learning rate by `factor` when `monitor` stops improving.

    As keras.callbacks.ReduceLROnPlateau; the optimizer's rate reads `self.factor`, a
    checkpointed variable.
    """

    def __init__(
        self,
        monitor,
        factor,
        patience,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0,
    ):
        super().__init__(monitor, mode, min_delta)
        self.reduce_by = factor
        self.patience = patience
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.factor = tf.Variable(1.0, trainable=False)
        self.wait = tf.Variable(0, dtype=tf.int64)
        self.cooling = tf.Variable(0, dtype=tf.int64)

    def update(self, row, epoch):
        """Track this epoch's value; lower the factor after `patience` epochs."""
        value = row.get(self.monitor)
        if value is None:
            return
        if self.cooling.numpy() > 0:
            self.cooling.assign_sub(1)
            self.wait.assign(0)
        if self.improves(value):
            self.best.assign(value)
            self.wait.assign(0)
        elif self.cooling.numpy() == 0:
            self.wait.assign_add(1)
            above_floor = row["lr"] > np.float32(self.min_lr)  # float32, as Keras
            if self.wait.numpy() >= self.patience and above_floor:
                self.reduce()

    def reduce(self):
        """Scale the factor by `factor`; start the cooldown."""
        self.factor.assign(self.factor * self.reduce_by)
        self.cooling.assign(self.cooldown)
        self.wait.assign(0)
        scale = float(self.factor.numpy())
        print(f"{self.monitor} stopped improving: rate scaled by {scale:.3g}")


class KeepBest(Tracker):
    """The best epoch's weights in `checkpoints/best/`, with its epoch and value."""

    def __init__(self, model, directory, monitor="val_loss", mode="auto", min_delta=0):
        super().__init__(monitor, mode, min_delta)
        self.weights = tf.train.Checkpoint(model=model)
        self.path = Path(directory) / "checkpoints" / "best" / "weights"

    def update(self, row, epoch):
        """Save the weights when this epoch's value is the best so far."""
        value = row.get(self.monitor)
        if value is not None and self.improves(value):
            self.save(row, epoch)

    def save(self, row, epoch):
        """Save the weights of `epoch`, whose history row is `row`."""
        value = row[self.monitor]
        self.best.assign(value)
        # Written whole in a partial folder, then renamed over the previous best.
        partial = self.path.parent.with_name("best.partial")
        shutil.rmtree(partial, ignore_errors=True)
        self.weights.write(str(partial / self.path.name))
        note = {"monitor": self.monitor, "value": value, "epoch": epoch}
        (partial / "best.json").write_text(json.dumps(note) + "\n")
        replace_folder(partial, self.path.parent)

    def restore(self):
        """Load the best weights into the model, if they read back whole."""
        path = self.path
        if not path.parent.exists():  # killed while it was replaced: the previous best
            path = path.parent.with_name("best.old") / path.name
        if not path.with_suffix(".index").exists():
            return
        try:
            read_whole(str(path))
            self.weights.read(str(path)).assert_existing_objects_matched()
        except CORRUPT as error:
            kept = "the model keeps the last epoch's weights"
            why = f"is unreadable ({type(error).__name__}): {kept}"
            print(f"warning: {path} {why}", file=sys.stderr)
            return
        value = f"{self.monitor} = {float(self.best.numpy()):.4g}"
        print(f"Restored the weights of the best epoch ({value})")
