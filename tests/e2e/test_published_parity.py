"""Side by side with keras.io (benchmarks/parity.py): the cheapest exact comparison, run small.
The others (DCGAN, WGAN-GP, every epoch) are `python benchmarks/parity.py` (docs/algorithms.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow


def test_a_sequential_teacher_distils_as_keras_io_published_distiller_computes(tmp_path):
    """keras.io's knowledge_distillation (restated in benchmarks/published/) and the script of the
    spec beside it, from the same student weights, the same Sequential teacher file (its one input
    fed as a tensor: it takes no dict) and the same unshuffled batches: 2 epochs of 4 batches,
    student_loss and distillation_loss within 1e-5 per epoch."""
    out = tmp_path / "rows.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "parity.py"), "knowledge_distillation"]
    command += ["--epochs", "2", "--steps", "4", "--teacher-epochs", "1", "--json", str(out)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, check=False)
    print(result.stdout)  # the table: measured differences <= 1e-6
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert [(r["epoch"], r["figure"]) for r in rows] == [
        (1, "student_loss"),
        (1, "distillation_loss"),
        (2, "student_loss"),
        (2, "distillation_loss"),
    ]
    for row in rows:
        assert row["tfgen"] == pytest.approx(row["published"], rel=1e-5), row
    assert rows[0]["tfgen"] != rows[2]["tfgen"]  # it trained
