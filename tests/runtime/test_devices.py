"""Devices are checked at start: a `mirrored` or `one_device` device that does not exist is one
line naming the devices there are, within seconds, never a hang. `strategy.cpu_replicas` (and
the script's --cpu-replicas) mirrors over N logical CPU devices, to run multi-replica code on a
machine without GPUs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import base_spec, read_history

pytestmark = pytest.mark.slow
ENV = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1"}


def run_script(script, tmp_path, *args, timeout=120):
    command = [
        sys.executable,
        str(script),
        "--synthetic",
        "--epochs",
        "1",
        "--steps-per-epoch",
        "2",
        "--output-dir",
        str(tmp_path / "run"),
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=ENV, check=False)


@pytest.mark.parametrize(
    ("strategy", "missing"),
    [
        ({"type": "mirrored", "devices": ["/cpu:0", "/cpu:1"]}, "/cpu:1"),
        ({"type": "one_device", "device": "/gpu:0"}, "/gpu:0"),
    ],
    ids=["mirrored", "one_device"],
)
def test_a_missing_device_is_one_line_naming_the_devices_there_are(build_spec, tmp_path, strategy, missing):
    script = build_spec(base_spec(strategy=strategy))
    result = run_script(script, tmp_path, timeout=90)  # it used to wait forever
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == f"error: no device {missing} here; the devices are /device:CPU:0"
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_cpu_replicas_in_the_spec_trains_on_two_replicas_and_resumes(build_spec, tmp_path):
    script = build_spec(base_spec(strategy={"type": "mirrored", "cpu_replicas": 2}))
    first = run_script(script, tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "2 replica(s): global batch 32, 16 per replica" in first.stdout
    second = run_script(script, tmp_path, "--epochs", "2")
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming from" in second.stdout
    assert [row["epoch"] for row in read_history(tmp_path / "run")] == [1, 2]


def test_cpu_replicas_on_the_command_line_overrides_the_default_devices(build_spec, tmp_path):
    script = build_spec(base_spec(strategy={"type": "mirrored"}))
    result = run_script(script, tmp_path, "--cpu-replicas", "4")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "4 replica(s): global batch 32, 8 per replica" in result.stdout


@pytest.mark.parametrize("value", ["0", "²"])
def test_cpu_replicas_must_be_a_positive_whole_number(build_spec, tmp_path, value):
    script = build_spec(base_spec(strategy={"type": "mirrored"}))
    result = run_script(script, tmp_path, "--cpu-replicas", value, timeout=90)
    assert result.returncode == 2
    assert "is not a whole number >= 1" in result.stderr.splitlines()[-1]


@pytest.mark.parametrize("precision", ["mixed_float16", "float32"])
def test_mixed_float16_without_a_gpu_says_it_is_slower_here(build_spec, tmp_path, precision):
    script = build_spec(base_spec(precision=precision), stem=precision)
    result = run_script(script, tmp_path, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    warnings = [line for line in result.stderr.splitlines() if "mixed_float16 with no GPU" in line]
    expected = (
        "warning: mixed_float16 with no GPU visible: on a CPU float16 is slower than float32"
        " (`precision: float32` there); with AVX-512 FP16, oneDNN's float16 kernels ran a CNN"
        " ~10x slower (TF_ENABLE_ONEDNN_OPTS=0 turns them off)"
    )
    assert warnings == ([] if precision == "float32" else [expected])
