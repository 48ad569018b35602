"""Checkpoints that survive anything: SIGKILL, SIGTERM, corrupt files; best checkpoints; TensorBoard."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import base_spec, build, read_history, tfgen_here

pytestmark = pytest.mark.slow
HARNESS = os.path.join(os.path.dirname(__file__), "..", "e2e", "harness.py")
# One epoch of fixtures/resume_v1/small.yaml, written by the single-file runtime kept beside it.
PREVIOUS_RUN = Path(__file__).parent / "fixtures" / "resume_v1"


def _spec(checkpoint, examples=4096, **overrides):
    """Enough steps (4096 examples, 256 steps an epoch) to be killed mid-epoch; dropout, so the RNG
    state matters too. Tests that kill nothing (and compile nothing) train on fewer `examples`."""
    spec = base_spec(
        **{
            "deterministic": True,
            "data": {
                "train": {"source": {"type": "synthetic", "examples": examples}, "batch_size": 16, "shuffle": examples},
                "validation": {"source": {"type": "synthetic", "examples": 64}},
            },
            "model": {
                "inputs": {"features": {"shape": [8]}},
                "layers": [{"type": "Dense", "units": 64, "activation": "relu"}, {"type": "Dropout", "rate": 0.3}],
                "outputs": {"label": [{"type": "Dense", "units": 3}]},
            },
            "train": {"epochs": 3, "steps_per_execution": 4},
            "checkpoint": checkpoint,
            **overrides,
        }
    )
    return spec


def _start(script, out, weights, *extra):
    return subprocess.Popen(
        [sys.executable, HARNESS, str(script), "--weights", str(weights), "--", "--output-dir", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )


def _wait_for_checkpoint(out, process, count=1, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        state = out / "checkpoints" / "checkpoint"
        if state.exists() and state.read_text().count("all_model_checkpoint_paths") >= count:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("no checkpoint appeared")


def _weights(path):
    data = np.load(path)
    return [data[k] for k in sorted(data, key=lambda k: int(k.split("_")[1]))]


def _uninterrupted(script, tmp_path):
    process = _start(script, tmp_path / "straight", tmp_path / "straight.npz")
    _out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    return _weights(tmp_path / "straight.npz"), read_history(tmp_path / "straight")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """uninterrupted(policy) -> the script of `_spec(policy)`, its uninterrupted run's final
    weights and history: built and run once a module (per worker) for every test of that policy."""
    runs = {}

    def get(policy):
        key = json.dumps(policy, sort_keys=True)
        if key not in runs:
            folder = tmp_path_factory.mktemp("uninterrupted")
            script = build(folder, _spec(policy))
            runs[key] = (script, *_uninterrupted(script, folder))
        return runs[key]

    return get


@pytest.mark.parametrize(
    "policy", [{"every_steps": 12, "keep": 2}, {"every_epochs": 1, "keep": 2}], ids=["every_steps", "every_epochs"]
)
def test_sigkill_then_rerun_ends_with_the_uninterrupted_weights(uninterrupted, tmp_path, policy):
    script, expected, expected_history = uninterrupted(policy)
    out = tmp_path / "killed"
    process = _start(script, out, tmp_path / "killed.npz")
    _wait_for_checkpoint(out, process)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = read_history(out) if (out / "history.jsonl").exists() else []
    assert len(done) < 3, "killed too late to test a resume"
    rerun = _start(script, out, tmp_path / "killed.npz")
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "Resuming from" in stdout
    for a, b in zip(expected, _weights(tmp_path / "killed.npz"), strict=False):
        np.testing.assert_array_equal(a, b)
    history = read_history(out)
    assert [row["epoch"] for row in history] == [1, 2, 3]
    strip = lambda rows: [
        {k: v for k, v in r.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")} for r in rows
    ]
    assert strip(history) == strip(expected_history)


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_sigterm_saves_where_it_stopped_and_a_rerun_resumes(uninterrupted, tmp_path, sig, code):
    script, expected, _ = uninterrupted({"every_epochs": 1, "keep": 2})
    out = tmp_path / "stopped"
    process = _start(script, out, tmp_path / "stopped.npz")
    _wait_for_checkpoint(out, process)
    assert process.poll() is None, "the run ended before the signal"
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stderr[-2000:]
    assert "Stopped by" in stdout and "run the same command again to resume" in stdout
    assert "Epoch 3/3" not in stdout
    rerun = _start(script, out, tmp_path / "stopped.npz")
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr[-3000:]
    for a, b in zip(expected, _weights(tmp_path / "stopped.npz"), strict=False):
        np.testing.assert_array_equal(a, b)
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3]


def test_corrupt_newest_checkpoint_falls_back_to_the_previous(build_spec, tmp_path):
    spec = _spec({"every_epochs": 1, "keep": 3}, examples=512, train={"epochs": 2, "steps_per_execution": 4})
    script = build_spec(spec)
    out = tmp_path / "run"
    first = _start(script, out, tmp_path / "w.npz")
    assert first.wait(timeout=300) == 0
    newest = min((out / "checkpoints").glob("ckpt-2.data-*"))
    newest.write_bytes(newest.read_bytes()[:20])  # truncated, as a partial write leaves it
    rerun = _start(script, out, tmp_path / "w.npz", "--epochs", "3")
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "ckpt-2" in stderr and "unreadable" in stderr
    assert "Resuming from" in stdout and "ckpt-1" in stdout
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3]


def test_keep_best_selects_the_best_epoch(build_spec, tmp_path):
    from conftest import load_module

    # In-process tests leave op determinism off: it is global to the process (and to later tests).
    # 4 epochs of 256 steps: past COMPILE_FROM_STEPS, so `jit_compile: auto` compiles this run.
    spec = _spec(
        {"every_epochs": 1, "keep": 1, "keep_best": {"monitor": "val_loss"}}, train={"epochs": 4}, deterministic=False
    )
    history = load_module(build_spec(spec)).main(["--output-dir", str(tmp_path / "run")])
    best = json.loads((tmp_path / "run" / "checkpoints" / "best" / "best.json").read_text())
    chosen = min(history, key=lambda row: row["val_loss"])
    assert best == {"monitor": "val_loss", "value": chosen["val_loss"], "epoch": chosen["epoch"]}
    assert list((tmp_path / "run" / "checkpoints" / "best").glob("*.index"))


def test_resume_never_and_exports(build_spec, tmp_path):
    from conftest import load_module

    spec = _spec(
        {"every_epochs": 1, "resume": "never", "export": ["keras", "saved_model"]},
        examples=512,
        train={"epochs": 1},
        deterministic=False,
    )
    module = load_module(build_spec(spec))
    module.main(["--output-dir", str(tmp_path / "run")])
    history = module.main(["--output-dir", str(tmp_path / "run")])
    assert [row["epoch"] for row in history] == [1]
    assert (tmp_path / "run" / "model.keras").exists()
    assert (tmp_path / "run" / "saved_model" / "saved_model.pb").exists()
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["spec"].endswith("small.yaml") and len(record["spec_sha256"]) == 64
    assert record["argv"] == ["--output-dir", str(tmp_path / "run")] and record["tensorflow"]


def test_tensorboard_events_hold_the_expected_tags_and_steps(build_spec, tmp_path):
    from conftest import load_module
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    spec = _spec(
        {"every_epochs": 1},
        examples=1024,
        train={"epochs": 2, "steps_per_execution": 4},
        logging={"tensorboard": True, "every_steps": 32, "profile": {"start_step": 10, "steps": 5}, "report": False},
        deterministic=False,
    )
    module = load_module(build_spec(spec))
    module.main(["--output-dir", str(tmp_path / "run")])
    train = EventAccumulator(str(tmp_path / "run" / "tensorboard" / "train"), size_guidance={"tensors": 0})
    train.Reload()
    tags = set(train.Tags()["tensors"])
    assert {
        "step/loss",
        "step/lr",
        "step/gradient_norm",
        "step/examples_per_second",
        "epoch/loss",
        "epoch/sparse_categorical_accuracy",
        "epoch/lr",
    } <= tags
    steps_per_epoch = 1024 // 16
    assert [e.step for e in train.Tensors("step/loss")] == list(range(32, 2 * steps_per_epoch + 1, 32))
    assert [e.step for e in train.Tensors("epoch/loss")] == [1, 2]
    validation = EventAccumulator(str(tmp_path / "run" / "tensorboard" / "validation"), size_guidance={"tensors": 0})
    validation.Reload()
    assert [e.step for e in validation.Tensors("epoch/loss")] == [1, 2]
    assert list((tmp_path / "run" / "tensorboard" / "profile").rglob("*.xplane.pb"))


def _checkpoint_values(path):
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(path))
    return {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()}


def test_a_run_of_the_previous_runtime_resumes_with_every_object_restored(tmp_path):
    """A checkpoint written before the runtime became a package restores whole (the restore asserts
    that every object matched) and the run trains on to epoch 2, writing the same keys."""
    shutil.copy(PREVIOUS_RUN / "small.yaml", tmp_path / "small.yaml")
    shutil.copytree(PREVIOUS_RUN / "run", tmp_path / "run")
    (tmp_path / "pyproject.toml").write_text("")
    built = tfgen_here("build", "small.yaml", "--out", "generated", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    result = subprocess.run(
        [sys.executable, "generated/small.py", "--synthetic", "--epochs", "2", "--output-dir", "run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Resuming from run/checkpoints/ckpt-1 (epoch 2, step 0)" in result.stdout
    previous = read_history(PREVIOUS_RUN / "run")
    history = read_history(tmp_path / "run")
    assert [row["epoch"] for row in history] == [1, 2] and history[0] == previous[0]
    before = _checkpoint_values(tmp_path / "run" / "checkpoints" / "ckpt-1")
    after = _checkpoint_values(tmp_path / "run" / "checkpoints" / "ckpt-2")
    assert sorted(after) == sorted(before)  # today's runs write the keys they always did
    # Restored, not started over: 2 steps an epoch, counted over both epochs.
    assert after["state/steps_run/.ATTRIBUTES/VARIABLE_VALUE"] == 4
    assert after["optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"] == 4
    best = min(row["val_loss"] for row in history)
    assert after["early_stopping/best/.ATTRIBUTES/VARIABLE_VALUE"] == pytest.approx(best)
    assert after["best_weights/best/.ATTRIBUTES/VARIABLE_VALUE"] == pytest.approx(best)
    identity = json.loads(after["identity/.ATTRIBUTES/VARIABLE_VALUE"])
    previous_identity = json.loads(before["identity/.ATTRIBUTES/VARIABLE_VALUE"])
    # The same spec and variables; today's identity adds the state's hash and the data's facts.
    assert {key: identity[key] for key in previous_identity} == previous_identity
    assert sorted(set(identity) - set(previous_identity)) == ["data", "state_sha256", "synthetic"]
