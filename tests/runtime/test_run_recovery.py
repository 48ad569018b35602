"""A killed run loses nothing it wrote, and what a rerun resumes is the same run.

Each case runs a generated script as a user does. A kill at one exact point is made by
KILL_HARNESS, which imports the script, wraps one function of the support package (or of
Keras) to end the process at its n-th call, and runs the script's `main`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import copy_run, read_history, snapshot
from test_run_safety import assert_one_line_error, run, small

pytestmark = pytest.mark.slow

KILL_HARNESS = """
import importlib.util, os, sys
script, owner, name, mode, nth = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(script))
import keras
import tfgen_runtime as rt
cls = {"History": rt.History, "RunCheckpoint": rt.RunCheckpoint, "Model": keras.Model}[owner]
original, calls = getattr(cls, name), []

def dying(self, *args, **kwargs):
    calls.append(1)
    if len(calls) != int(nth):
        return original(self, *args, **kwargs)
    if mode == "after":
        original(self, *args, **kwargs)
    elif mode == "partial":  # a file or folder half written where the export goes
        path = str(args[0])
        if name == "export":
            os.makedirs(path, exist_ok=True)
            path = os.path.join(path, "saved_model.pb")
        with open(path, "wb") as file:
            file.write(b"PK\\x03\\x04 half of it")
    os._exit(9)

setattr(cls, name, dying)
spec = importlib.util.spec_from_file_location("script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(sys.argv[7:])
"""


def killed(script, where, mode, nth, *args):
    """Run `script` with `args` until the `nth` call of `where` ("History.append") ends it:
    `before` the call, `after` it, or `partial`ly written (an export)."""
    owner, name = where.split(".")
    command = [sys.executable, "-c", KILL_HARNESS, str(script), owner, name, mode, str(nth), "--", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 9, result.stderr[-3000:]
    return result


def epochs_of(out):
    return [row["epoch"] for row in read_history(out)]


@pytest.mark.parametrize(
    ("where", "mode"),
    [("RunCheckpoint.save", "after"), ("RunCheckpoint.save", "before"), ("History.append", "before")],
    ids=["after-the-checkpoint", "before-the-checkpoint", "before-the-row"],
)
def test_a_kill_around_an_epochs_checkpoint_and_row_leaves_every_epoch_once_after_the_rerun(
    build_spec, tmp_path, where, mode
):
    script, out = build_spec(small(epochs=3)), tmp_path / "run"
    killed(script, where, mode, 2, "--output-dir", str(out))
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert epochs_of(out) == [1, 2, 3]


def test_raising_epochs_changing_keep_and_toggling_tensorboard_resume_and_a_new_rate_refuses(
    finished_runs, build_spec, tmp_path
):
    out = copy_run(finished_runs(small())[1], tmp_path / "run")
    edited = small(epochs=3)
    edited["checkpoint"]["keep"] = 2
    edited["logging"] = {"tensorboard": True, "report": False}
    result = run(build_spec(edited, stem="edited"), "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Resuming from" in result.stdout and "(epoch 3, step 0)" in result.stdout
    assert epochs_of(out) == [1, 2, 3]
    assert (out / "tensorboard").is_dir()
    before = snapshot(out)
    faster = json.loads(json.dumps(edited))
    faster["train"]["epochs"] = 4
    faster["optimizer"]["learning_rate"] = 0.1
    faster["logging"] = {"tensorboard": False, "report": False}  # (a refused run still opens its event files)
    refused = run(build_spec(faster, stem="faster"), "--output-dir", str(out))
    assert_one_line_error(refused, "is of another run", "the spec changed since", "--fresh")
    assert snapshot(out) == before


def npz_spec(path):
    spec = small(epochs=1)
    spec["data"]["train"]["source"] = {"type": "npz", "path": str(path), "x": "x", "y": "y"}
    return spec


def write_npz(path, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(128, 8)).astype("float32")
    np.savez(path, x=x, y=rng.integers(0, 3, size=128).astype("int32"))


def test_synthetic_and_real_runs_never_mix_and_a_changed_data_file_is_a_warning(build_spec, tmp_path):
    data = tmp_path / "data.npz"
    write_npz(data, seed=0)
    script = build_spec(npz_spec(data))
    synthetic, real = tmp_path / "synthetic", tmp_path / "real"
    assert run(script, "--output-dir", str(synthetic), "--synthetic").returncode == 0
    before = snapshot(synthetic)
    result = run(script, "--output-dir", str(synthetic), "--epochs", "2")
    assert_one_line_error(result, "is of another run", "it trained on --synthetic data", "--fresh")
    assert snapshot(synthetic) == before
    assert run(script, "--output-dir", str(real)).returncode == 0
    recorded = json.loads((real / "run.json").read_text())
    assert recorded["synthetic"] is False and recorded["data"][0]["path"] == str(data)
    before = snapshot(real)
    result = run(script, "--output-dir", str(real), "--epochs", "2", "--synthetic")
    assert_one_line_error(result, "it trained on the real data, this run is --synthetic")
    assert snapshot(real) == before
    write_npz(data, seed=1)
    result = run(script, "--output-dir", str(real), "--epochs", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "the data changed" in warnings[0] and str(data) in warnings[0]
    assert epochs_of(real) == [1, 2]


@pytest.mark.parametrize(
    ("where", "broken"),
    [("Model.save", "model.keras and saved_model are"), ("Model.export", "saved_model is")],
    ids=["in-model.keras", "in-saved_model"],
)
def test_a_kill_during_the_final_export_is_written_again_by_the_rerun(finished_runs, tmp_path, where, broken):
    spec = small()
    spec["deterministic"] = True
    spec["checkpoint"]["export"] = ["keras", "saved_model"]
    script, whole = finished_runs(spec)  # the uninterrupted run (read only)
    out = tmp_path / "run"
    killed(script, where, "partial", 1, "--output-dir", str(out))
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Already finished at epoch 2" in result.stdout
    lines = [line for line in result.stdout.splitlines() if "missing or unreadable" in line]
    assert lines == [f"{broken} missing or unreadable: writing again from the last checkpoint"]
    assert not list(out.glob("*.partial*")) and not list(out.glob("*.old"))
    import keras
    import tensorflow as tf

    again, uninterrupted = keras.saving.load_model(out / "model.keras"), keras.saving.load_model(whole / "model.keras")
    for ours, theirs in zip(again.get_weights(), uninterrupted.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    served = tf.saved_model.load(str(out / "saved_model"))
    assert served.signatures  # a SavedModel that loads and serves
    before = snapshot(out)
    assert run(script, "--output-dir", str(out)).returncode == 0
    assert snapshot(out) == before  # a complete finished run changes nothing


def test_a_resume_past_a_shorter_epoch_ends_it_without_a_negative_speed(build_spec, tmp_path):
    spec = small(steps_per_execution=1)
    spec["checkpoint"] = {"every_steps": 7, "keep": 5}
    script, out = build_spec(spec), tmp_path / "run"
    killed(script, "RunCheckpoint.save_in_epoch", "after", 1, "--output-dir", str(out))
    result = run(script, "--output-dir", str(out), "--steps-per-epoch", "5")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(epoch 1, step 7)" in result.stdout
    first, second = read_history(out)
    assert "examples_per_second" not in first and np.isfinite(first["loss"])
    assert second["examples_per_second"] > 0
