"""A script's start says nothing on stderr on a machine without a GPU, and `--help` answers
without importing TensorFlow (the options are read first)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT
from tfgen_runtime.startup import kept_lines

BANNER = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
ONEDNN = "I0000 00:00:1796322516.887527   10720 port.cc:153] oneDNN custom operations are on.\n"
CUDA = "I0000 00:00:1796322516.887991   10720 cudart_stub.cc:31] Could not find cuda drivers on your machine.\n"
WARNING = "W0000 00:00:1796322516.887991   10720 some_op.cc:12] a real warning\n"
ERROR = "E0000 00:00:1796322516.887991   10720 some_op.cc:12] a real error\n"
PYTHON = "/x/keras/src/thing.py:3: UserWarning: a Python warning\n"
IMPORT_STDERR = BANNER + ONEDNN + CUDA + WARNING + BANNER + ONEDNN + CUDA + ERROR + PYTHON
STARTUP_MARKS = ("absl::InitializeLog", "port.cc:", "cudart_stub.cc:")


def test_the_start_up_lines_are_dropped_and_real_warnings_and_errors_kept():
    assert kept_lines(IMPORT_STDERR) == WARNING + ERROR + PYTHON


def test_a_log_level_the_user_set_wins():
    assert kept_lines(IMPORT_STDERR, "0") == IMPORT_STDERR
    assert kept_lines(IMPORT_STDERR, "1") == WARNING + ERROR + PYTHON
    assert kept_lines(IMPORT_STDERR, "2") == ERROR + PYTHON
    assert kept_lines(IMPORT_STDERR, "3") == PYTHON


def has_startup_lines(stderr: str) -> bool:
    return any(mark in stderr for mark in STARTUP_MARKS)


@pytest.mark.slow
def test_help_does_not_import_tensorflow_and_says_nothing_on_stderr():
    # `-u` (an interpreter option) makes this a fresh interpreter: the tests' zygotes have
    # TensorFlow imported already.
    code = (
        "import runpy, sys\n"
        f"sys.argv = [{str(ROOT / 'generated' / 'digits.py')!r}, '--help']\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('tensorflow imported:', 'tensorflow' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-u", "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "--epochs" in result.stdout
    assert "tensorflow imported: False" in result.stdout
    assert result.stderr == ""
