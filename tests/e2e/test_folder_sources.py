"""Folder sources end to end: a generated script trains on a folder of PNG and JPEG files (and
of text files), resumes a killed run exactly, names a file that cannot be decoded in one line,
records its class names, and `tfgen smoke` runs it on synthetic and on real data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import read_history, tfgen_here
from folder_data import SHAPES, image_spec, text_spec, write_images, write_reviews

pytestmark = pytest.mark.slow

# Runs a script's main() until the `nth` save of a checkpoint inside an epoch, then dies (as
# SIGKILL would: no handler runs).
KILL_AFTER_SAVE = """
import importlib.util, os, sys
script, nth = sys.argv[1:3]
sys.path.insert(0, os.path.dirname(script))
import tfgen_runtime as rt
original, calls = rt.RunCheckpoint.save_in_epoch, []

def dying(self, *args):
    original(self, *args)
    calls.append(1)
    if len(calls) == int(nth):
        os._exit(9)

rt.RunCheckpoint.save_in_epoch = dying
spec = importlib.util.spec_from_file_location("script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(sys.argv[3:])
"""


def run(script, cwd, *args, timeout=300):
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "-1"},
        check=False,
    )


def error_lines(result):
    """The `error: ` lines of a run that failed without a traceback."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def without_times(rows):
    return [
        {k: v for k, v in row.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")}
        for row in rows
    ]


def test_an_image_folder_trains_a_cnn_and_run_json_records_its_class_names(build_spec, tmp_path):
    write_images(tmp_path / "data" / "shapes", per_class=16)
    spec = image_spec(Path("data/shapes"))  # relative: from the working directory
    spec["train"] = {"epochs": 10}
    result = run(build_spec(spec), tmp_path, "--output-dir", "run")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "data/shapes: 48 images in 3 classes" in result.stdout
    history = read_history(tmp_path / "run")
    assert len(history) == 10
    assert history[-1]["val_sparse_categorical_accuracy"] == 1.0  # 12 held out, 4 of each class
    assert history[-1]["loss"] < history[0]["loss"]
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["class_names"] == {"shape": list(SHAPES)}
    assert (tmp_path / "run" / "model.keras").exists()


def test_an_image_folder_is_tested_on_its_held_out_files_and_on_a_test_folder(build_spec, tmp_path):
    write_images(tmp_path / "shapes", per_class=16, size=(6, 6))
    write_images(tmp_path / "test", per_class=4, size=(6, 6))
    spec = image_spec(tmp_path / "shapes", size=(6, 6), test_split=0.25)
    spec["train"] = {"epochs": 6}
    result = run(build_spec(spec), tmp_path, "--output-dir", "split")
    assert result.returncode == 0, result.stderr[-3000:]
    tested = json.loads((tmp_path / "split" / "test.json").read_text())
    assert [line for line in result.stdout.splitlines() if line.startswith("Test:")]
    assert tested["sparse_categorical_accuracy"] == 1.0  # 12 held out, 4 of each class
    source = {"type": "image_folder", "directory": str(tmp_path / "test"), "image_size": [6, 6]}
    spec = image_spec(tmp_path / "shapes", size=(6, 6), test={"source": source})
    spec["train"] = {"epochs": 6}
    result = run(build_spec(spec, stem="own"), tmp_path, "--output-dir", "own")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((tmp_path / "own" / "test.json").read_text())["sparse_categorical_accuracy"] == 1.0


def test_a_run_killed_mid_epoch_resumes_to_the_uninterrupted_history(build_spec, tmp_path):
    write_images(tmp_path / "shapes", per_class=12, size=(6, 6))
    spec = image_spec(tmp_path / "shapes", size=(6, 6))
    spec["data"]["train"]["batch_size"] = 4  # 27 training images: 6 steps an epoch
    spec["train"] = {"epochs": 3, "steps_per_execution": 1}
    spec["checkpoint"] = {"every_steps": 2, "keep": 2}
    script = build_spec(spec)
    straight = run(script, tmp_path, "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    out = tmp_path / "killed"
    command = [sys.executable, "-c", KILL_AFTER_SAVE, str(script), "4", "--output-dir", str(out)]
    killed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert killed.returncode == 9, killed.stderr[-3000:]
    assert [row["epoch"] for row in read_history(out)] == [1]  # killed at step 2 of epoch 2
    resumed = run(script, tmp_path, "--output-dir", str(out))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "(epoch 2, step 2)" in resumed.stdout
    assert without_times(read_history(out)) == without_times(read_history(tmp_path / "straight"))


def test_a_corrupt_image_stops_the_run_in_one_line_naming_it(build_spec, tmp_path):
    written = write_images(tmp_path / "shapes", per_class=8, size=(4, 4))
    written[5].write_bytes(b"\x89PNG\r\n\x1a\n but no image after the signature")
    result = run(build_spec(image_spec(tmp_path / "shapes", size=(4, 4))), tmp_path, "--output-dir", "run")
    assert error_lines(result) == [f"error: {written[5]}: cannot be read as an image (png, jpeg, gif or bmp)"]


def test_a_missing_folder_and_a_class_count_unlike_the_targets_are_one_line(build_spec, tmp_path):
    script = build_spec(image_spec(Path("data/shapes")))
    missing = error_lines(run(script, tmp_path, "--output-dir", "run"))
    assert len(missing) == 1 and missing[0].startswith("error: data/shapes: no such folder")
    write_images(tmp_path / "data" / "shapes", classes=("a", "b"), per_class=2, size=(2, 2))
    unlike = error_lines(run(script, tmp_path, "--output-dir", "run"))
    assert unlike == ["error: data/shapes: 2 class folders (a, b); the target has classes: 3"]
    assert not (tmp_path / "run" / "history.jsonl").exists()


def test_smoke_runs_an_image_folder_spec_on_synthetic_and_on_real_data(tmp_path):
    write_images(tmp_path / "data" / "shapes", per_class=10, size=(4, 4))
    spec = image_spec(Path("data/shapes"), size=(4, 4))
    (tmp_path / "shapes.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    for data in ([], ["--real-data", "16"]):
        result = tfgen_here("smoke", "shapes.yaml", "--steps", "2", *data, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith("PASS shapes.yaml (saved at epoch 1, resumed to epoch 2;")


def test_a_text_folder_trains_a_bag_of_words_model_that_takes_raw_strings(build_spec, tmp_path):
    write_reviews(tmp_path / "data" / "reviews")
    script = build_spec(text_spec(Path("data/reviews")))
    result = run(script, tmp_path, "--output-dir", "run")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "data/reviews: 48 text files in 2 classes" in result.stdout
    history = read_history(tmp_path / "run")
    assert history[-1]["val_sparse_categorical_accuracy"] == 1.0
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["class_names"] == {"label": ["negative", "positive"]}
    predict = (
        "import sys, keras, tensorflow as tf\n"
        "model = keras.models.load_model(sys.argv[1])\n"
        "print(model.predict({'text': tf.constant(['a great film', 'dull and slow'])}, verbose=0)['label'].argmax(-1))"
    )
    command = [sys.executable, "-c", predict, str(tmp_path / "run" / "model.keras")]
    predicted = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert predicted.stdout.strip() == "[1 0]", predicted.stderr[-2000:]
    synthetic = run(script, tmp_path, "--output-dir", "synthetic", "--synthetic", "--epochs", "1")
    assert synthetic.returncode == 0, synthetic.stderr[-3000:]
