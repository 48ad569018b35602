"""tfgen's own Python is held to the standard of what it generates: `ruff check` (the project's
rules: line length 120, with B, SIM, UP, RUF, import order and, on tfgen/, complexity at most 10 per
function, C901) and `ruff format --check` pass."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_passes_on_tfgens_own_code(command):
    folders = ["tfgen", "tests", "benchmarks", "scripts"]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", *folders],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
