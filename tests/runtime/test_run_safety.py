"""A run never loses or mixes work, and bad data never trains silently (issue 11).

Each case runs a generated script the way a user does (a subprocess), and asserts the exit
code, the one-line message (no traceback) and that no existing file changed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import assert_one_line_error, base_spec, copy_run, snapshot

pytestmark = pytest.mark.slow


def run(script, *args, env=None, timeout=300):
    command = [sys.executable, str(script), *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})},
        check=False,
    )


def small(**train):
    spec = base_spec()
    spec["train"] = {"epochs": 2, **train}
    spec["checkpoint"] = {"every_epochs": 1, "keep": 5}
    return spec


def test_a_changed_model_in_the_same_directory_is_refused_and_the_old_run_is_untouched(
    finished_runs, build_spec, tmp_path
):
    out = copy_run(finished_runs(small())[1], tmp_path / "run")
    before = snapshot(out)
    changed = small()
    changed["model"]["layers"][0]["units"] = 64
    result = run(build_spec(changed, stem="changed"), "--output-dir", str(out))
    assert_one_line_error(
        result,
        "is of another run",
        "the spec changed since",
        "variable dense/kernel was (8, 16), is (8, 64) now",
        "--fresh",
        "--output-dir",
    )
    assert snapshot(out) == before


def test_a_killed_run_rerun_with_another_model_is_refused_and_keeps_every_file(build_spec, tmp_path):
    spec = small()
    spec["data"]["train"]["source"]["examples"] = 20000
    spec["train"] = {"epochs": 50, "steps_per_execution": 5}
    spec["checkpoint"] = {"every_steps": 20, "keep": 3}
    script, out = build_spec(spec), tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, str(script), "--output-dir", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while not list((out / "checkpoints").glob("ckpt-*.index")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    process.send_signal(signal.SIGKILL)
    process.wait()
    before = snapshot(out)
    assert any(name.startswith("checkpoints/ckpt-") for name in before)
    changed = json.loads(json.dumps(spec))
    changed["model"]["layers"][0]["units"] = 32
    result = run(build_spec(changed, stem="changed"), "--output-dir", str(out))
    assert_one_line_error(result, "is of another run", "dense/kernel")
    assert snapshot(out) == before


def finished_small(finished_runs, folder):
    """The script of `small()` and a copy (at `folder`) of its finished two-epoch run."""
    script, finished = finished_runs(small())
    return script, copy_run(finished, folder)


def test_a_garbage_checkpoint_list_resumes_from_the_newest_file(finished_runs, tmp_path):
    script, out = finished_small(finished_runs, tmp_path / "run")
    (out / "checkpoints" / "checkpoint").write_text("garbage {{{")
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Resuming from" in result.stdout and "ckpt-2" in result.stdout
    rows = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [row["epoch"] for row in rows] == [1, 2, 3]


def test_a_corrupt_best_checkpoint_is_a_warning_not_a_crash(build_spec, tmp_path):
    # min_delta 100: only the first epoch is ever the best, so the rerun reads the corrupt one.
    early = {"monitor": "val_loss", "patience": 5, "min_delta": 100.0, "restore_best_weights": True}
    spec = small(early_stopping=early)
    script, out = build_spec(spec), tmp_path / "run"
    assert run(script, "--output-dir", str(out)).returncode == 0
    for data in (out / "checkpoints" / "best").glob("weights.data-*"):
        data.write_bytes(data.read_bytes()[:10])
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "best" in result.stderr and "unreadable" in result.stderr


def test_a_garbage_history_is_refused_naming_the_file(finished_runs, tmp_path):
    script, out = finished_small(finished_runs, tmp_path / "run")
    (out / "history.jsonl").write_text('{"epoch": 1, "loss": 0.5}\n{"epo')
    before = snapshot(out)
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert_one_line_error(result, "history.jsonl line 2 is not a history row", "--fresh")
    assert snapshot(out) == before


def test_a_finished_run_says_so_and_changes_nothing(finished_runs, tmp_path):
    script, out = finished_small(finished_runs, tmp_path / "run")
    before = snapshot(out)
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0
    assert "Already finished at epoch 2" in result.stdout and "--fresh" in result.stdout
    assert snapshot(out) == before


def test_fresh_says_what_it_discards_and_starts_a_new_history(finished_runs, tmp_path):
    script, out = finished_small(finished_runs, tmp_path / "run")
    result = run(script, "--output-dir", str(out), "--epochs", "1", "--fresh")
    assert result.returncode == 0
    assert "--fresh: discarded the previous run" in result.stdout and "history.jsonl" in result.stdout
    rows = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [row["epoch"] for row in rows] == [1]
    assert sorted(p.name for p in (out / "checkpoints").glob("ckpt-*.index")) == ["ckpt-1.index"]


def _python_source(tmp_path, body):
    (tmp_path / "mydata.py").write_text("import numpy as np\n\n\ndef load():\n" + body)
    spec = small()
    spec["data"] = {
        "train": {"source": {"type": "python", "function": "mydata:load"}, "batch_size": 32},
        "validation_split": 0.25,
    }
    return spec


@pytest.mark.parametrize(
    "body, phrases",
    [
        ("    return np.zeros((0, 8), 'float32'), np.zeros(0, 'int32')\n", ["make no full batch of 32"]),
        ("    return np.zeros((40, 8), 'float32'), np.zeros(40, 'int32')\n", ["make no full batch of 32"]),
        (
            "    return np.zeros((640, 8), 'float32'), np.zeros(600, 'int32')\n",
            ["mydata:load", "different numbers of rows", "'features': 640", "'label': 600"],
        ),
        (
            "    y = np.zeros(64); y[5] = 3.7\n    return np.zeros((64, 8), 'float32'), y\n",
            ["mydata:load", "targets.label", "3.7 at row 5"],
        ),
        (
            "    y = np.zeros(64, 'int64'); y[5] = 12\n    return np.zeros((64, 8), 'float32'), y\n",
            ["targets.label: 1 labels outside [0, 3), e.g. 12 at row 5"],
        ),
        (
            "    y = np.zeros(64); y[0] = np.nan\n    return np.zeros((64, 8), 'float32'), y\n",
            ["targets.label", "nan at row 0"],
        ),
    ],
    ids=["empty", "less-than-a-batch", "rows", "float-labels", "label-range", "nan-label"],
)
def test_bad_data_is_a_one_line_error_before_training(build_spec, tmp_path, body, phrases):
    script = build_spec(_python_source(tmp_path, body))
    result = run(script, "--output-dir", str(tmp_path / "run"), env={"PYTHONPATH": str(tmp_path)})
    assert_one_line_error(result, *phrases)
    assert not (tmp_path / "run" / "history.jsonl").exists()


def test_streamed_labels_outside_the_classes_stop_the_run_in_one_line(build_spec, tmp_path):
    body = (
        "    import tensorflow as tf\n    y = np.zeros(64, 'int64'); y[40] = 7\n"
        "    return tf.data.Dataset.from_tensor_slices((np.zeros((64, 8), 'float32'), y))\n"
    )
    spec = _python_source(tmp_path, body)
    spec["data"].pop("validation_split")
    spec["data"]["validation"] = {"source": {"type": "synthetic", "examples": 32}}
    result = run(build_spec(spec), "--output-dir", str(tmp_path / "run"), env={"PYTHONPATH": str(tmp_path)})
    assert_one_line_error(result, "targets.label: labels outside [0, 3)")


def test_float_pixels_into_a_uint8_input_are_refused(build_spec, tmp_path):
    spec = _python_source(tmp_path, "    return np.full((64, 8), 0.5), np.zeros(64, 'int32')\n")
    spec["model"]["inputs"]["features"]["dtype"] = "uint8"
    result = run(build_spec(spec), "--output-dir", str(tmp_path / "run"), env={"PYTHONPATH": str(tmp_path)})
    assert_one_line_error(result, "inputs.features", "change when cast to uint8", "0.5 at row 0")


@pytest.mark.parametrize(
    "content, phrase",
    [
        (b"PK\x03\x04 this is not a zip", "data.npz:"),
        (b"\x93NUMPY garbage", "data.npz:"),
        (None, "no array x_train"),
    ],
    ids=["garbage", "truncated", "missing-key"],
)
def test_unreadable_npz_files_are_one_line_errors(build_spec, tmp_path, content, phrase):
    path = tmp_path / "data.npz"
    if content is None:
        np.savez(path, x_other=np.zeros((64, 8)), y_train=np.zeros(64))
    else:
        np.savez(path, x_train=np.zeros((64, 8)), y_train=np.zeros(64))
        path.write_bytes(content if content.startswith(b"PK") else path.read_bytes()[:40])
    spec = small()
    spec["data"] = {
        "train": {"source": {"type": "npz", "path": str(path), "x": "x_train", "y": "y_train"}, "batch_size": 32}
    }
    result = run(build_spec(spec), "--output-dir", str(tmp_path / "run"))
    assert_one_line_error(result, phrase)


def test_debug_shows_the_traceback(build_spec, tmp_path):
    script = build_spec(_python_source(tmp_path, "    return np.zeros((640, 8), 'float32'), np.zeros(600, 'int32')\n"))
    result = run(script, "--output-dir", str(tmp_path / "run"), "--debug", env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1 and "Traceback" in result.stderr and "UserError" in result.stderr
