"""A script's start: TensorFlow and Keras imported with their start-up lines kept off stderr.

Only the standard library at import: a script reads its options first (`--help` answers
without TensorFlow), then calls `import_tensorflow()`.

Why TF_CPP_MIN_LOG_LEVEL alone does not quiet a start: TensorFlow 2.21 logs through Abseil,
and its libraries log while they load, before anything calls `absl::InitializeLog()`. Until
then Abseil writes every message to stderr whatever its level, after the line "All log
messages before absl::InitializeLog() is called are written to STDERR" (abseil-cpp pull
requests 1718 and 1957). On a machine without a GPU that is four lines a start: the oneDNN
note (`port.cc`) and the missing CUDA driver (`cudart_stub.cc`), each from two libraries.
So file descriptor 2, where C++ writes, is captured while TensorFlow and Keras import, and
what was written there goes back to stderr but for the lines below the log level.
"""

import importlib
import os
import re
import sys
import tempfile

LEVEL = "TF_CPP_MIN_LOG_LEVEL"
DEFAULT_LEVEL = (
    "3"  # when the user set none: TensorFlow's own INFO, WARNING and ERROR lines off
)
BANNER = "WARNING: All log messages before absl::InitializeLog() is called"
# An Abseil log line: severity letter, date, time, thread, file:line]
ABSL_LINE = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [^ ]+:\d+\] ")
SEVERITIES = "IWEF"
# What is only start-up noise when the user set no level: these files' INFO lines.
STARTUP_FILES = (
    "port.cc:",
    "cudart_stub.cc:",
    "cuda_executor.cc:",
    "cpu_feature_guard.cc:",
)


def import_tensorflow():
    """Import TensorFlow and Keras, keeping their C++ start-up lines off stderr.

    With TF_CPP_MIN_LOG_LEVEL unset (it is then set to 3 for the rest of the run), only the
    start-up noise is dropped: Abseil's "before InitializeLog" line and the INFO lines of the
    device probes; any other line (a warning, an error, a Python warning) is shown. A level
    the user set wins: the lines below it are dropped, the others shown.
    """
    users_level = os.environ.get(LEVEL)
    os.environ.setdefault(LEVEL, DEFAULT_LEVEL)
    with tempfile.TemporaryFile() as captured:
        try:
            import_into(captured, ("keras", "tensorflow"))
        except BaseException:
            sys.stderr.write(read(captured))  # all of it: it may say what went wrong
            raise
        sys.stderr.write(kept_lines(read(captured), users_level))
        sys.stderr.flush()


def kept_lines(text, users_level=None):
    """The lines of `text` (written to stderr while TensorFlow imported) that stay.

    Args:
        text: what was written to file descriptor 2.
        users_level: TF_CPP_MIN_LOG_LEVEL as the user set it (None: unset).

    Returns:
        The kept lines, each ending in a newline.
    """
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not dropped(line, users_level))


def dropped(line, users_level):
    """Whether `line` is below the level: start-up noise (no level set), or below the user's."""
    if users_level is None:
        return line.startswith(BANNER) or is_startup_info(line)
    level = int(users_level) if users_level.strip().isdigit() else 0
    if line.startswith(BANNER):
        return level > 0
    found = ABSL_LINE.match(line)
    return bool(found) and SEVERITIES.index(found[1]) < level


def is_startup_info(line):
    """Whether `line` is an INFO line of the device probes TensorFlow runs as it loads."""
    found = ABSL_LINE.match(line)
    return (
        bool(found) and found[1] == "I" and any(name in line for name in STARTUP_FILES)
    )


def read(handle):
    handle.seek(0)
    return handle.read().decode(errors="replace")


def import_into(handle, modules):
    """Import `modules` with file descriptor 2 (where C++ writes) sent to `handle`."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(handle.fileno(), 2)
    try:
        for module in modules:
            importlib.import_module(module)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
