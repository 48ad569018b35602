"""A finished run's model on new data: `predict` (one row per example) and `evaluate`.

The script reads the new data as it reads its training data and batches it with its own
validation pipeline; here the run's final model (model.keras) predicts or is evaluated with
the script's own losses and metrics. What is written is written whole (a temporary file,
renamed): a failure part-way leaves nothing.
"""

import csv
import json
import os
import sys
import tempfile
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from .errors import UserError
from .files import FileExamples
from .model_checks import regularization_loss
from .report import metric_values

MODEL_FILE = "model.keras"
PREDICTIONS_FILE = "predictions.csv"
EVALUATION_FILE = "evaluation.json"


def trained_model(run_dir):
    """The run's final model (`run_dir`/model.keras), loaded for inference.

    Raises:
        UserError: the folder holds no model.keras (not trained, or an algorithm whose
            networks are exported one file each: they are named).
    """
    path = Path(run_dir) / MODEL_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: {no_model_reason(Path(run_dir))}")
    return keras.saving.load_model(path, compile=False)


def no_model_reason(folder):
    """Why `folder` has no model to predict with: no run, not trained, or several networks."""
    if not folder.is_dir():
        return "no such run folder"
    networks = sorted(path.name for path in folder.glob("*.keras"))
    if networks:
        return f"no single model to predict with; its networks: {', '.join(networks)}"
    return f"no trained model ({MODEL_FILE}): train it first"


def named_targets(targets, run_dir):
    """`targets` (`Field`s) with each class target's names: the spec's, else those the
    run's run.json records (a folder source's); None when neither names them."""
    path = Path(run_dir) / "run.json"
    recorded = (
        json.loads(path.read_text()).get("class_names", {}) if path.is_file() else {}
    )
    named = {}
    for key, field in targets.items():
        names = field.names or recorded.get(key)
        named[key] = field._replace(names=tuple(names) if names else None)
    return named


def output_path(args, default):
    """Where a command writes: `--out`, else `default` in the run's folder."""
    return Path(args.out) if args.out else Path(args.output_dir) / default


def example_ids(data):
    """Each example's id: a folder source's file paths, else row numbers from 1 (None for
    a dataset: numbered as it is read)."""
    if isinstance(data, FileExamples):
        return [str(path) for path in data.paths]
    if isinstance(data, tf.data.Dataset):
        return None
    features = data[0]
    count = len(next(iter(features.values())))
    return list(range(1, count + 1))


def write_predictions(args, batches, data, targets, logits=()):
    """Write one row per example of `data` (batched as `batches`) with the run's final
    model: its id and each output's prediction; a class target's likeliest class names
    and their probabilities.

    Args:
        args: the `predict` command's options: the run's folder (`output_dir`), the file
            to write (`out`: CSV, or JSON lines when it ends in `.jsonl`; default
            predictions.csv in the run's folder) and `top_k`, the classes of each class
            target.
        batches: `(features, targets)` batches of `data`, in order.
        data: the examples as read (their ids: a folder's file paths, else row numbers).
        targets: the targets' `Field`s, their class names set (`named_targets`).
        logits: the class targets whose outputs are logits.

    Returns:
        The number of rows written.
    """
    model = trained_model(args.output_dir)
    ids = example_ids(data)
    rows = []
    for features, _ in batches:
        outputs = model(features, training=False)
        for index in range(len(next(iter(outputs.values())))):
            one = {name: np.asarray(value[index]) for name, value in outputs.items()}
            rows.append(
                prediction_row(ids[len(rows)], one, targets, logits, args.top_k)
            )
        progress(f"predicted {len(rows)} of {len(ids)} examples")
    out = output_path(args, PREDICTIONS_FILE)
    write_whole(out, rows_text(rows, out.suffix == ".jsonl"))
    progress(f"predicted {len(rows)} examples: {out}", done=True)
    return len(rows)


def prediction_row(example_id, outputs, targets, logits, top_k):
    """One example's row: its id, then per output its value, or its likeliest classes."""
    row = {"id": example_id}
    for name, value in outputs.items():
        field = targets.get(name)
        if field is None or not field.classes:
            row[name] = value.item() if value.size == 1 else value.tolist()
            continue
        chances = probabilities(value, name in logits)
        names = field.names or [str(i) for i in range(len(chances))]
        for rank, class_id in enumerate(np.argsort(-chances, kind="stable")[:top_k], 1):
            column = name if rank == 1 else f"{name}_{rank}"
            row[column] = names[class_id]
            row[f"{column}_probability"] = round(float(chances[class_id]), 6)
    return row


def probabilities(output, from_logits):
    """Each class's probability from one example's output: one unit is class 1's."""
    output = np.asarray(output, dtype=np.float64).reshape(-1)
    if output.size == 1:
        one = 1 / (1 + np.exp(-output[0])) if from_logits else output[0]
        return np.array([1 - one, one])
    if from_logits:
        shifted = np.exp(output - output.max())
        return shifted / shifted.sum()
    return output


def rows_text(rows, json_lines):
    """The rows as JSON lines, or as CSV (a list-valued cell as JSON)."""
    if json_lines:
        return "".join(json.dumps(row) + "\n" for row in rows)
    columns = list(rows[0]) if rows else ["id"]
    lines = StringLines()
    writer = csv.DictWriter(lines, columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()}
        )
    return "".join(lines)


class StringLines(list):
    """A list the csv module writes lines into."""

    def write(self, text):
        self.append(text)


def write_evaluation(args, batches, losses, build_metrics, update_metrics, total=None):
    """Write evaluation.json: the spec's losses and metrics of the run's final model on
    labelled `batches`, as the script's validation step computes them (named as in the
    history, without `val_`), and the number of examples.

    Args:
        args: the `evaluate` command's options: the run's folder (`output_dir`) and the
            file to write (`out`; default evaluation.json in the run's folder).
        batches: `(features, targets)` batches.
        losses: the script's `per_example_losses(targets, predictions)`.
        build_metrics: the script's `build_metrics()`.
        update_metrics: the script's `update_metrics(metrics, ...)`.
        total: the script's `total_loss(task_losses)` when the losses are weighted (None:
            their sum).

    Returns:
        The figures written.

    Raises:
        UserError: the data has no example.
    """
    model = trained_model(args.output_dir)
    values = evaluated(model, batches, losses, build_metrics, update_metrics, total)
    out = output_path(args, EVALUATION_FILE)
    write_whole(out, json.dumps(values, indent=2) + "\n")
    shown = " - ".join(f"{k}: {v:.4f}" for k, v in values.items() if k != "examples")
    progress(f"evaluated {values['examples']} examples: {shown} ({out})", done=True)
    return values


def evaluated(model, batches, losses, build_metrics, update_metrics, total):
    """`write_evaluation`'s figures: the validation step's, batch by batch."""
    metrics = build_metrics()
    examples = 0
    for features, targets in batches:
        predictions = model(features, training=False)
        task_losses = losses(targets, predictions)
        summed = (
            tf.add_n(list(task_losses.values()))
            if total is None
            else total(task_losses)
        )
        loss = summed + regularization_loss(model)
        update_metrics(metrics, targets, predictions, loss, task_losses)
        examples += int(tf.shape(summed)[0])
        progress(f"evaluated {examples} examples")
    if not examples:
        raise UserError("the data to evaluate is empty: give it examples")
    return {"examples": examples, **metric_values(metrics)}


def write_whole(path, text):
    """Write `text` to `path` through a temporary file renamed over it: whole or not at all."""
    folder = Path(path).parent
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder to write {Path(path).name} in")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{Path(path).name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def progress(line, done=False):
    """A progress line on stderr: rewritten in place on a terminal, else only when done."""
    again = "\r" if sys.stderr.isatty() else ""
    if done:
        print(f"{again}{line}", file=sys.stderr, flush=True)
    elif again:
        print(f"{again}{line}", end="", file=sys.stderr, flush=True)
