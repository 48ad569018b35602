"""`train.phases` run for real: a frozen phase leaves its layers (and their BatchNormalization
statistics) untouched, the next trains them at its rate, and a run killed at the phase boundary
resumes bit-identically, on one device and under `mirrored` (two logical CPUs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import HARNESS, base_spec, read_history
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow

# model.weights order: body kernel, bias; norm gamma, beta, moving mean, moving variance; head kernel, bias.
FROZEN_FIRST = range(6)
HEAD = range(6, 8)
TIMES = ("epoch_seconds", "examples_per_second", "input_wait")


def _spec(examples=512, **overrides):
    return base_spec(
        **{
            "deterministic": True,
            "data": {
                "train": {"source": {"type": "synthetic", "examples": examples}, "batch_size": 16, "shuffle": examples},
                "validation": {"source": {"type": "synthetic", "examples": 64}},
            },
            "model": {
                "inputs": {"features": {"shape": [8]}},
                "layers": [
                    {"type": "Dense", "units": 16, "name": "body"},
                    {"type": "BatchNormalization", "name": "norm"},
                    {"type": "Activation", "activation": "relu"},
                ],
                "outputs": {"label": [{"type": "Dense", "units": 3}]},
            },
            "train": {
                "epochs": 3,
                "steps_per_execution": 4,
                "phases": [{"epochs": 1, "frozen": ["body", "norm"]}, {"epochs": 2, "learning_rate_factor": 0.1}],
            },
            **overrides,
        }
    )


def _strip(rows):
    return [{k: v for k, v in row.items() if k not in TIMES} for row in rows]


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_a_frozen_phase_leaves_its_layers_and_their_statistics_and_the_next_trains_them(build_spec, tmp_path):
    script = build_spec(_spec())
    initial, after_one, history, out = _harness(script, tmp_path, "one", "--epochs", "1")
    for i in FROZEN_FIRST:  # kernel, bias, gamma, beta and the moving statistics: bit-identical
        np.testing.assert_array_equal(initial[i], after_one[i])
    assert all(not np.array_equal(initial[i], after_one[i]) for i in HEAD)
    assert history[0]["phase"] == 1 and "phase: 1" in out
    assert history[0]["lr"] == pytest.approx(0.01)
    _, after_all, history, out = _harness(script, tmp_path, "all")
    assert all(not np.array_equal(initial[i], after_all[i]) for i in FROZEN_FIRST)
    assert [row["phase"] for row in history] == [1, 2, 2]
    assert [row["lr"] for row in history] == pytest.approx([0.01, 0.001, 0.001])
    record = json.loads((tmp_path / "all" / "run.json").read_text())
    assert record["phases"] == [
        {"epochs": 1, "frozen": ["body", "norm"], "learning_rate_factor": 1.0},
        {"epochs": 2, "frozen": [], "learning_rate_factor": 0.1},
    ]


def _start(script, out, weights):
    return subprocess.Popen(
        [sys.executable, str(HARNESS), str(script), "--weights", str(weights), "--", "--output-dir", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )


def _wait_for_first_checkpoint(out, process, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (out / "checkpoints" / "checkpoint").exists():
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    raise AssertionError("no checkpoint appeared")


def _weights(path):
    with np.load(path) as saved:
        return [array for _, array in sorted(saved.items(), key=lambda kv: int(kv[0].split("_")[1]))]


def test_sigkill_at_the_phase_boundary_then_rerun_ends_as_the_uninterrupted_run(build_spec, tmp_path):
    script = build_spec(_spec(examples=4096))  # 256 steps an epoch: the kill lands in epoch 2
    _, expected, expected_history, _ = _harness(script, tmp_path, "straight")
    out = tmp_path / "killed"
    process = _start(script, out, tmp_path / "killed.npz")
    _wait_for_first_checkpoint(out, process)  # the end of phase 1 (epoch 1's checkpoint)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert len(read_history(out)) < 3, "killed too late to test a resume"
    rerun = _start(script, out, tmp_path / "killed.npz")
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "Resuming from" in stdout
    _same(expected, _weights(tmp_path / "killed.npz"))
    assert _strip(read_history(out)) == _strip(expected_history)


@pytest.mark.parametrize("strategy", ["default", "mirrored"])
def test_a_run_stopped_at_the_boundary_resumes_into_phase_two_bit_identically(build_spec, tmp_path, strategy):
    script = build_spec(_spec(strategy={"type": strategy}))
    _, expected, expected_history, _ = _harness(script, tmp_path, "straight", cpus=2)
    _harness(script, tmp_path, "resumed", "--epochs", "1", cpus=2)  # phase 1 only, then a new process
    _, resumed, history, out = _harness(script, tmp_path, "resumed", cpus=2)
    assert "Resuming from" in out
    _same(expected, resumed)
    assert _strip(history) == _strip(expected_history)
