"""The generated script's command line: its options, and `run`, which turns a user's
mistake into one line on stderr."""

import argparse
import os
import sys

import tensorflow as tf

from . import imports
from .errors import UserError


def parse_args(argv, doc, epochs, output_dir, cpu_replicas=None):
    """The generated script's options (`--help` lists them)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    add = parser.add_argument
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
    add("--output-dir", default=output_dir, help=f"(default {output_dir})")
    add("--fresh", action="store_true", help="discard the previous run; start over")
    add("--debug", action="store_true", help="show tracebacks of errors")
    replicas = "mirrored: over N logical CPU devices (to test replicas)"
    add(
        "--cpu-replicas",
        type=positive,
        default=cpu_replicas,
        metavar="N",
        help=replicas,
    )
    trust = "import any module the spec names (default: the project's and tfgen's libraries)"
    add("--trust", action="store_true", help=trust)
    args = parser.parse_args(argv)
    imports.TRUSTED = args.trust
    return args


def positive(text):
    """An option's value: a whole number of at least 1."""
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


def run(main):
    """Run `main()`: a user's mistake is one line on stderr (exit 1), not a traceback.

    `--debug` (or TFGEN_DEBUG=1) shows the traceback.
    """
    debug = "--debug" in sys.argv or os.environ.get("TFGEN_DEBUG")
    try:
        main()
    except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError) as error:
        if debug:
            raise
        why = f"a peer worker died or hung ({type(error).__name__})"
        sys.exit(f"error: {why}; restart every worker to resume")
    except (UserError, OSError, FloatingPointError, tf.errors.OpError) as error:
        if debug or not is_users(error):
            raise
        sys.exit(f"error: {first_line(error)}")


def is_users(error):
    """Whether `error` is the user's to fix (else its traceback is shown).

    A label or finite-value check in the graph (streamed data) names the field in its
    message; any other graph error is not the user's.
    """
    if not isinstance(error, tf.errors.OpError):
        return True
    return any(is_data_check(line) for line in str(error).splitlines())


def first_line(error):
    """The line of `error` to show: a failed data check's, else its first."""
    lines = str(error).splitlines() or [type(error).__name__]
    checks = [line for line in lines if is_data_check(line)]
    return (checks or lines)[0].strip()


def is_data_check(line):
    """Whether `line` is the message of a data check in the graph (labels, finite values)."""
    return "labels outside" in line or "non-finite values" in line
