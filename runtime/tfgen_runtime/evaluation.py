"""The test data's one evaluation of the final model: a `Test:` line and `test.json`."""

import json

from .errors import UserError
from .files import FileExamples, first_examples
from .report import reset
from .run_dir import write_whole

TEST_FILE = "test.json"


def checked_test_data(test, most=None):
    """The test data (arrays, a dataset or a folder's files) as the run uses it: its
    first `most` examples (--max-examples); UserError when it has none."""
    if most is not None:
        test = first_examples(test, most)
    if isinstance(test, FileExamples):
        empty = not len(test)
    elif isinstance(test, tuple):
        empty = not len(next(iter(test[1].values())))
    else:
        empty = test.cardinality() == 0
    if empty:
        raise UserError("the test data is empty: give it examples")
    return test


def evaluate_test(trainer, test, run, *, finished=False, best=None):
    """Evaluate the final model once on `test` (distributed batches) with the validation
    step and metrics; print the `Test:` line and write test.json (whole) on the chief.

    A `finished` run (nothing was trained) does it only when test.json is missing, after
    loading `best` (a `KeepBest`, when the exports have the best epoch's weights): it
    restored the last checkpoint. Returns the values (None: not evaluated).
    """
    path = run.output / TEST_FILE
    if finished and path.exists():
        return None
    if finished and best is not None:
        best.restore()
    reset(trainer.validation_metrics)
    scores = trainer.evaluate(test)
    values = {key.removeprefix("val_"): value for key, value in scores.items()}
    print(scores_line(values), flush=True)
    if run.chief:
        write_whole(path, json.dumps(values, indent=2) + "\n")
    return values


def scores_line(values):
    """`Test: loss: 0.1234 - accuracy: 0.9700`, formatted as the epoch line."""
    shown = [f"{key}: {value:.4f}" for key, value in values.items()]
    return "Test: " + " - ".join(shown)
