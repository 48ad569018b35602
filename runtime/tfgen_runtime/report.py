"""What a run shows of each epoch: its history values, the epoch line, a progress bar."""

import sys

import keras

# Not on the line (input_wait: an input-bound epoch has its own line).
HIDDEN = ("epoch", "lr", "epoch_seconds", "examples_per_second", "input_wait")


def metric_values(metrics, prefix=""):
    """The history values of one set of metrics."""
    return {f"{prefix}{k}": float(metric.result()) for k, metric in metrics.items()}


def progress_bar(steps):
    """A Keras progress bar's `update` on a terminal; a no-op when output is a file."""
    if not sys.stdout.isatty():
        return no_progress
    return keras.utils.Progbar(steps).update


def no_progress(step):
    """A progress bar's `update` that shows nothing."""


def epoch_line(row, epochs):
    """`Epoch 3/30 - 0.4s - loss: 0.1234 - ... - lr: 0.001`, as Keras prints it."""
    parts = [f"Epoch {row['epoch']}/{epochs} - {row['epoch_seconds']:.1f}s"]
    for key, value in row.items():
        if key in HIDDEN:
            continue
        shown = f"{value:.4f}" if isinstance(value, float) else value
        parts.append(f"{key}: {shown}")
    parts.append(f"lr: {row['lr']:.3g}")
    return " - ".join(parts)


def reset(metrics):
    """Reset every metric of a dict of them."""
    for metric in metrics.values():
        metric.reset_state()
