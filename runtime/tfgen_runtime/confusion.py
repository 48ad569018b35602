"""Each class target's confusion matrix on the test (else validation) data: confusion.json.

The file is small (counts and class names, never the predictions), and the run report
(`run_report`) draws it.
"""

import json

import numpy as np

from .regular_files import write_whole

CONFUSION_FILE = "confusion.json"


def confusion_counts(labels, predicted, classes):
    """The `classes` x `classes` counts of (true class, predicted class) pairs: row i,
    column j counts the examples of class i predicted as j."""
    counts = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(counts, (np.ravel(labels), np.ravel(predicted)), 1)
    return counts


def predicted_classes(labels, output, from_logits):
    """`(true ids, predicted ids)` of one batch of a class target: a one-unit output is
    thresholded (at 0 for logits, else 0.5), a wider one's largest unit wins; one-hot labels
    (the output's shape) become their ids."""
    labels = np.asarray(labels)
    output = np.asarray(output)
    if output.shape[-1] == 1:
        threshold = 0.0 if from_logits else 0.5
        return labels.round().astype(np.int64), (output > threshold).astype(np.int64)
    if labels.shape == output.shape:
        labels = labels.argmax(-1)
    return labels.round().astype(np.int64), output.argmax(-1)


def write_confusion(
    model, batches, run, targets, split, finished=False, best=None, logits=()
):
    """Predict `batches` (`(features, targets, ...)`, not distributed) with `model` and
    write confusion.json on the chief: per class target of `targets` (`Field`s), its class
    names and counts, and which `split` they are of. A `finished` run writes it only when
    missing, after loading `best` (a `KeepBest`) as `evaluate_test` does. `logits`: the
    targets whose one-unit outputs are logits (others: probabilities).
    """
    path = run.output / CONFUSION_FILE
    classified = {name: field for name, field in targets.items() if field.classes}
    if not run.chief or not classified or (finished and path.exists()):
        return
    if finished and best is not None:
        best.restore()
    counts = {n: np.zeros((f.classes,) * 2, np.int64) for n, f in classified.items()}
    for batch in batches:
        outputs = model(batch[0], training=False)
        for name, field in classified.items():
            pair = predicted_classes(batch[1][name], outputs[name], name in logits)
            counts[name] += confusion_counts(*pair, field.classes)
    matrices = {n: matrix(run, n, f, counts[n]) for n, f in classified.items()}
    record = {"split": split, "targets": matrices}
    write_whole(path, json.dumps(record) + "\n")


def matrix(run, name, field, counts):
    """One target's entry in confusion.json: its class names and counts."""
    names = (
        field.names
        or run.class_names.get(name)
        or [str(i) for i in range(field.classes)]
    )
    return {"class_names": list(names), "counts": counts.tolist()}
