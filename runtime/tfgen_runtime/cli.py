"""The generated script's command line: its options, and `run`, which turns a user's
mistake into one line on stderr."""

import errno
import os
import re
import sys

import tensorflow as tf

from . import options
from .csv_files import CHANGED, changed_since_checked
from .errors import UserError
from .files import FAILED

# Why a file could not be written or read, and what to do about it.
FULL = (
    "free space on its disk (or pass another --output-dir), then rerun: the run resumes"
)
READ_ONLY = "make it writable (or pass another --output-dir), then rerun"
ADVICE = {
    errno.ENOSPC: FULL,
    errno.EDQUOT: FULL,
    errno.EFBIG: FULL,
    errno.EACCES: READ_ONLY,
    errno.EPERM: READ_ONLY,
    errno.EROFS: READ_ONLY,
    errno.ENOENT: "check the path, then rerun",
    errno.ENOTDIR: "check the path, then rerun",
    errno.EISDIR: "check the path, then rerun",
    errno.EIO: "check the disk, then rerun",
}


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
        # A streamed file that changed since its check explains any failure reading it.
        changed = isinstance(error, tf.errors.OpError) and changed_since_checked()
        if debug or not (changed or is_users(error)):
            raise
        sys.exit(f"error: {changed or file_system_line(error) or first_line(error)}")


def is_users(error):
    """Whether `error` is the user's to fix (else its traceback is shown).

    A file that cannot be written or read (a full disk, a read-only folder) is; so is a
    label or finite-value check in the graph (streamed data), which names the field in its
    message; any other graph error is not the user's.
    """
    if not isinstance(error, tf.errors.OpError):
        return True
    if file_system_line(error):
        return True
    return any(is_data_check(line) for line in str(error).splitlines())


def file_system_line(error):
    """`<path>: <why>; <what to do>` when `error` is a file system's (None: it is not)."""
    if isinstance(error, OSError) and error.errno in ADVICE:
        path = error.filename or options.OUTPUT_DIR or "the run's folder"
        return f"{path}: {os.strerror(error.errno)}; {ADVICE[error.errno]}"
    if not isinstance(error, tf.errors.OpError):
        return None
    for line in str(error).splitlines():
        for number, advice in ADVICE.items():
            why = os.strerror(number)
            if why in line:
                return f"{op_error_path(line, why)}: {why}; {advice}"
    return None


def op_error_path(message, why):
    """The path a TensorFlow op's message names before `why` (else the message's start)."""
    before = message.split(why)[0].rstrip(" ;:,")
    before = re.sub(r"^\{\{[^}]*\}\}\s*", "", before)  # the function the op ran in
    before = re.sub(r"\.tempstate[0-9]+$", "", before)  # TensorFlow's temporary name
    return before or options.OUTPUT_DIR or "the run's folder"


def first_line(error):
    """The line of `error` to show: a failed data check's, else its first (of a UserError
    raised while a step was traced: its own, not TensorFlow's `in user code:` trace)."""
    lines = str(error).splitlines() or [type(error).__name__]
    if lines[0].strip() == "in user code:" and isinstance(error, UserError):
        last = [line.strip() for line in lines if line.strip()][-1]
        lines = [last.removeprefix(f"{type(error).__name__}: ")]
    checks = [line for line in lines if is_data_check(line)]
    return failed_file(checks[0]) if checks else lines[0].strip()


def is_data_check(line):
    """Whether `line` is the message of a data check in the graph (labels, finite
    values, a label not of the classes, a folder source's file that cannot be read)."""
    checks = ("labels outside", "non-finite values", "not one of the classes", FAILED)
    return any(check in line for check in (*checks, CHANGED))


def failed_file(line):
    """A data check's line: its assertion's message (`<path>: cannot be read as ...`,
    `targets.label: labels outside [0, 3)`), without TensorFlow's words around it."""
    found = re.search(r"assertion failed: \[(.*?)\](?: \[|$)", line)
    return found[1] if found else line.strip()
