"""specs/finetune.yaml end to end on data/shapes: the frozen first phase leaves the backbone's
weights bit-identical while the head trains, the second phase trains the backbone, and a run
killed in the second phase resumes to the uninterrupted run's weights and history (its own
metric, from specs/shape_metrics.py, included)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, read_history, saved_weights
from conftest import run_harness as _harness
from test_example_specs_real_data import KILL_AFTER_EPOCH, run, without_times

pytestmark = pytest.mark.slow
SCRIPT = ROOT / "generated" / "finetune.py"
HEAD = slice(-2, None)  # the head's kernel and bias: the model's last weights; the backbone's are before
BACKBONE = slice(None, -2)
FEW = ("--max-examples", "96")  # 3 steps an epoch of the 315 training images: enough to move every weight


def test_finetune_freezes_the_backbone_in_phase_one_and_resumes_exactly_in_phase_two(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the spec's data path is relative to the project
    # One uninterrupted run: its weights at epoch 1's checkpoint are phase one's result.
    start, expected, expected_history, _ = _harness(SCRIPT, tmp_path, "straight", *FEW, record_saves=True)
    after_one = saved_weights(tmp_path, "straight", 1)
    for a, b in zip(start[BACKBONE], after_one[BACKBONE], strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(not np.array_equal(a, b) for a, b in zip(start[HEAD], after_one[HEAD], strict=True))
    assert expected_history[0]["phase"] == 1

    changed = [not np.array_equal(a, b) for a, b in zip(start[BACKBONE], expected[BACKBONE], strict=True)]
    assert sum(changed) > len(changed) // 2, "phase 2 trained too little of the backbone"
    assert [row["phase"] for row in expected_history] == [1, 2, 2]
    assert all(0.0 <= row["val_mean_recall"] <= 1.0 for row in expected_history)  # specs/shape_metrics.py's

    killed = run("-c", KILL_AFTER_EPOCH, str(SCRIPT), "2", "--output-dir", str(tmp_path / "killed"), *FEW)
    assert killed.returncode == 9, killed.stderr[-3000:]
    assert [row["phase"] for row in read_history(tmp_path / "killed")] == [1, 2]
    _, resumed, history, out = _harness(SCRIPT, tmp_path, "killed", *FEW)
    assert "Resuming from" in out
    for a, b in zip(expected, resumed, strict=True):
        np.testing.assert_array_equal(a, b)
    assert without_times(history) == without_times(expected_history)
