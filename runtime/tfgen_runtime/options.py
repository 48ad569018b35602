"""The generated script's options (`--help` lists them), read before TensorFlow is imported.

Only the standard library (and the runtime's TensorFlow-free `imports`): a script parses its
command line first, so that `--help` and a wrong option answer at once.
"""

import argparse

from . import imports

# The run's folder (--output-dir): where a write that names no file was going.
OUTPUT_DIR = None


def parse_args(argv, doc, epochs, output_dir, cpu_replicas=None, predicts=False):
    """The generated script's options (`--help` lists them).

    Args:
        argv: the arguments (None: the command line's).
        doc: the script's docstring; its first line describes the script.
        epochs: the spec's epochs (the default of --epochs).
        output_dir: the spec's run folder (the default of --output-dir).
        cpu_replicas: the spec's logical CPU devices to mirror over (None: one device).
        predicts: offer the `predict` and `evaluate` commands (the script has one model).

    Returns:
        The parsed options; `command` is None (train), "predict" or "evaluate".
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    add_training_options(parser.add_argument, epochs, cpu_replicas)
    add_run_options(parser.add_argument, output_dir, None)
    if predicts:
        add_commands(parser, output_dir)
    args = parser.parse_args(argv)
    args.command = getattr(args, "command", None)
    imports.TRUSTED = args.trust
    global OUTPUT_DIR
    OUTPUT_DIR = args.output_dir
    return args


def add_training_options(add, epochs, cpu_replicas):
    """The options of a training run."""
    add(
        "--epochs",
        type=positive,
        default=epochs,
        help=f"total epochs (default {epochs})",
    )
    add(
        "--steps-per-epoch",
        type=positive,
        help="cap on the training steps of each epoch",
    )
    add("--synthetic", action="store_true", help="random data of the declared shapes")
    first = "train and validate on the first N examples of each (smoke tests)"
    add("--max-examples", type=positive, metavar="N", help=first)
    add("--fresh", action="store_true", help="discard the previous run; start over")
    replicas = "mirrored: over N logical CPU devices (to test replicas)"
    add(
        "--cpu-replicas",
        type=positive,
        default=cpu_replicas,
        metavar="N",
        help=replicas,
    )


def add_run_options(add, output_dir, unset):
    """The options every command takes: the run's folder, tracebacks, trust.

    `unset` is each option's value when it is not given (a command's own parser leaves the
    main parser's value alone: argparse.SUPPRESS).
    """
    default = output_dir if unset is None else unset
    add(
        "--output-dir",
        type=folder,
        default=default,
        help=f"the run's folder (default {output_dir})",
    )
    add(
        "--debug",
        action="store_true",
        default=unset or False,
        help="show tracebacks of errors",
    )
    trust = "import any module and call any function the spec names (default: the project's modules, "
    trust += "and of libraries only Keras classes and known data loaders)"
    add("--trust", action="store_true", default=unset or False, help=trust)


def add_commands(parser, output_dir):
    """`predict DATA` and `evaluate DATA`: the run's final model on new data."""
    commands = parser.add_subparsers(dest="command", metavar="{predict,evaluate}")
    what = "each example's predictions (CSV, or JSON lines when --out ends in .jsonl)"
    predict = commands.add_parser("predict", help=what, description=what)
    predict.add_argument("data", help="the new data, read as the training data is")
    out = "where to write them (default predictions.csv in the run's folder)"
    predict.add_argument("--out", help=out)
    top = "the K likeliest classes of each class target (default 1)"
    predict.add_argument("--top-k", type=positive, default=1, metavar="K", help=top)
    add_run_options(predict.add_argument, output_dir, argparse.SUPPRESS)
    what = "the spec's losses and metrics on labelled data (evaluation.json)"
    evaluate = commands.add_parser("evaluate", help=what, description=what)
    evaluate.add_argument(
        "data", help="the labelled data, read as the training data is"
    )
    evaluate.add_argument(
        "--out",
        help="where to write them (default evaluation.json in the run's folder)",
    )
    add_run_options(evaluate.add_argument, output_dir, argparse.SUPPRESS)


def folder(text):
    """An option's value: a folder's path (not empty: that would be the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name the run's folder")
    return text


def positive(text):
    """An option's value: a whole number of at least 1."""
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)
