"""Importing Keras for `--deep` with TensorFlow's start-up lines kept off stderr."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from tfgen.errors import UsageError


def import_keras():
    """Keras, imported with TensorFlow's start-up lines kept off stderr (they come from C++
    before its logging is set up, so TF_CPP_MIN_LOG_LEVEL cannot stop them)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "keras" in sys.modules:
        return sys.modules["keras"]
    with tempfile.TemporaryFile() as captured:
        try:
            with _stderr_to(captured):
                import keras
        except ImportError as error:
            raise UsageError(f'--deep needs TensorFlow and Keras (pip install "tfgen[train]"): {error}') from None
        except BaseException:
            captured.seek(0)
            sys.stderr.write(captured.read().decode(errors="replace"))  # what went wrong, if it fails
            raise
    return keras


@contextlib.contextmanager
def _stderr_to(handle):
    """File descriptor 2 (where C++ writes) sent to `handle` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(handle.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
