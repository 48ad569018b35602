"""The example specs on the data shipped in data/ (made by data/make_examples.py): an image
folder, a CSV with a string column and a text folder. Each committed script trains to a stated
metric, evaluates once on its test split (the `Test:` line and test.json), and resumes to the
uninterrupted run's history when it is killed right after an epoch's checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, read_history

pytestmark = pytest.mark.slow

# Kills the script (SIGKILL-like: no cleanup) right after its `nth` end-of-epoch checkpoint.
KILL_AFTER_EPOCH = """
import importlib.util, os, sys
script, nth = sys.argv[1:3]
sys.path.insert(0, os.path.dirname(script))
import tfgen_runtime as rt
original, calls = rt.RunCheckpoint.save, []

def dying(self, *args):
    original(self, *args)
    calls.append(1)
    if len(calls) == int(nth):
        os._exit(9)

rt.RunCheckpoint.save = dying
spec = importlib.util.spec_from_file_location("script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(sys.argv[3:])
"""

CLASS_NAMES = {"shapes": {"shape": ["circle", "square", "stripes"]}, "reviews": {"sentiment": ["neg", "pos"]}}
# spec: the test metric and the bound it must pass (the data are made to be learnable).
EXAMPLES = {
    "shapes": ("sparse_categorical_accuracy", ">=", 0.9),
    "houses": ("mean_absolute_error", "<=", 40000.0),  # prices average 437k, spread 162k
    "reviews": ("accuracy", ">=", 0.85),
}


def run(*args, timeout=900):
    """A generated script run from the project's root (the specs' data paths are relative)."""
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def without_times(rows):
    return [
        {k: v for k, v in row.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")}
        for row in rows
    ]


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_an_example_spec_trains_tests_and_resumes_exactly_after_a_kill(name, tmp_path):
    script = ROOT / "generated" / f"{name}.py"
    straight = run(str(script), "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    metric, direction, bound = EXAMPLES[name]
    scores = json.loads((tmp_path / "straight" / "test.json").read_text())
    test_lines = [line for line in straight.stdout.splitlines() if line.startswith("Test:")]
    assert len(test_lines) == 1 and f"{metric}: {scores[metric]:.4f}" in test_lines[0]
    assert scores[metric] >= bound if direction == ">=" else scores[metric] <= bound, scores
    recorded = json.loads((tmp_path / "straight" / "run.json").read_text())
    assert recorded.get("class_names", {}) == CLASS_NAMES.get(name, {})

    killed_dir = tmp_path / "killed"
    killed = run("-c", KILL_AFTER_EPOCH, str(script), "2", "--output-dir", str(killed_dir))
    assert killed.returncode == 9, killed.stderr[-3000:]
    assert [row["epoch"] for row in read_history(killed_dir)] == [1, 2]
    assert not (killed_dir / "test.json").exists()
    resumed = run(str(script), "--output-dir", str(killed_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout
    assert without_times(read_history(killed_dir)) == without_times(read_history(tmp_path / "straight"))
    assert json.loads((killed_dir / "test.json").read_text()) == scores
    # A finished run run again tests nothing when test.json is there: test_test_split.py's
    # test_a_test_split_is_evaluated_once_and_again_only_when_test_json_is_missing.
