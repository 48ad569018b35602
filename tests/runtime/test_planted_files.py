"""A generated script against planted files (issue 35, the attacker's findings): a FIFO where it
reads a run or data file ends it within a timeout in one line naming the FIFO (it used to block
forever, deaf to SIGTERM and SIGINT); a link planted where it writes a run file is refused, and the
file it leads to is untouched; /dev/zero, a forged npz header and a class folder's FIFO are one
line. Each case runs the script as a user does (a subprocess) with a timeout.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from conftest import assert_one_line_error, base_spec, build, copy_run
from folder_data import image_spec, text_spec, write_images, write_reviews

pytestmark = pytest.mark.slow
LOCK = ".tfgen.lock"
HANG = 120  # seconds: far more than a refusal takes, far less than forever


def run(script, *args, memory=None):
    """The script's run; a failure naming the hang when it has not ended within HANG seconds.
    `memory`: a cap on its address space (bytes), so that a regression cannot fill the host's."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    command = [sys.executable, str(script), *args]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=HANG,
            env=env,
            check=False,
            preexec_fn=limit if memory else None,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{script.name} {' '.join(args)} did not end within {HANG} s (killed)")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A small script and its finished run (2 epochs): each test works on a copy."""
    spec = base_spec()
    spec["train"] = {"epochs": 2}
    spec["checkpoint"] = {"every_epochs": 1, "keep": 1}
    script = build(tmp_path_factory.mktemp("build"), spec)
    out = tmp_path_factory.mktemp("finished") / "run"
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    return script, out


@pytest.mark.parametrize(
    "name, args",
    [
        ("history.jsonl", ["--epochs", "3"]),
        ("run.json", ["--fresh"]),
        ("checkpoints/checkpoint", ["--epochs", "3"]),
        (LOCK, ["--epochs", "3"]),
    ],
    ids=["history", "run-json-fresh", "checkpoint-state", "lock"],
)
def test_a_fifo_run_file_ends_the_script_in_one_line_naming_it(finished, tmp_path, name, args):
    script, done = finished
    out = copy_run(done, tmp_path / "run")
    fifo = out / name
    fifo.unlink()
    os.mkfifo(fifo)
    result = run(script, "--output-dir", str(out), *args)
    assert_one_line_error(result, f"{fifo}: a FIFO (named pipe), not a regular file")
    assert fifo.exists() and not fifo.is_file()


def test_a_history_linked_to_dev_zero_is_one_line_naming_it(finished, tmp_path):
    script, done = finished
    out = copy_run(done, tmp_path / "run")
    history = out / "history.jsonl"
    history.unlink()
    history.symlink_to("/dev/zero")
    result = run(script, "--output-dir", str(out), "--epochs", "3", memory=6 << 30)
    assert_one_line_error(result, f"{history}: a character device, not a regular file")


@pytest.mark.parametrize("name", [LOCK, "history.jsonl.partial", "run.json.partial"])
def test_a_link_planted_in_the_run_folder_is_refused_and_the_file_it_leads_to_is_untouched(finished, tmp_path, name):
    script, done = finished
    out = copy_run(done, tmp_path / "run")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    planted = out / name
    planted.unlink(missing_ok=True)
    planted.symlink_to(victim)
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert_one_line_error(result, f"{planted}: a symbolic link (to {victim}); a run never writes through links")
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("kind", ["image", "text"])
def test_a_fifo_in_a_class_folder_ends_the_script_in_one_line_naming_it(tmp_path, kind):
    data = tmp_path / "data"
    if kind == "image":
        write_images(data, per_class=4, size=(8, 8))
        spec, fifo = image_spec(data), data / "square" / "zz.png"
    else:
        write_reviews(data, per_class=4)
        spec, fifo = text_spec(data), data / "positive" / "zz.txt"
    os.mkfifo(fifo)
    script = build(tmp_path / "build", spec)
    result = run(script, "--output-dir", str(tmp_path / "run"), "--epochs", "1")
    assert_one_line_error(result, f"{fifo}: a FIFO (named pipe), not a regular file")


def npz_spec(path):
    spec = base_spec()
    spec["train"] = {"epochs": 1}
    spec["data"] = {
        "train": {"source": {"type": "npz", "path": str(path), "x": "x_train", "y": "y_train"}, "batch_size": 32}
    }
    return spec


def forged_npz(path):
    """An .npz whose x_train header declares 400 billion float32s (1.46 TiB) in a few bytes."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (400000000000, 8), }"
    header += " " * (63 - len(header) % 64) + "\n"
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(64)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x_train.npy", npy)
        buffer = path.with_suffix(".y.npy")
        np.save(buffer, np.zeros(64, "int32"))
        archive.write(buffer, "y_train.npy")


@pytest.mark.parametrize("kind", ["forged-header", "fifo"])
def test_an_npz_that_declares_terabytes_or_is_a_fifo_is_one_line_naming_it(tmp_path, kind):
    path = tmp_path / "data.npz"
    if kind == "fifo":
        os.mkfifo(path)
        phrase = f"{path}: a FIFO (named pipe), not a regular file"
    else:
        forged_npz(path)
        phrase = f"{path}: array x_train declares shape (400000000000, 8) of float32 (12,800,000,000,000 bytes)"
    script = build(tmp_path / "build", npz_spec(path))
    result = run(script, "--output-dir", str(tmp_path / "run"), memory=6 << 30)
    assert_one_line_error(result, phrase)


def test_a_fifo_tfrecord_file_ends_the_script_in_one_line_naming_it(tmp_path):
    fifo = tmp_path / "data.tfrecord"
    os.mkfifo(fifo)
    spec = base_spec()
    spec["train"] = {"epochs": 1}
    features = {"features": {"shape": [8], "dtype": "float32"}, "label": {"shape": [], "dtype": "int64"}}
    source = {"type": "tfrecord", "files": str(fifo), "features": features}
    spec["data"] = {"train": {"source": source, "batch_size": 32}}
    script = build(tmp_path / "build", spec)
    result = run(script, "--output-dir", str(tmp_path / "run"))
    assert_one_line_error(result, f"{fifo}: a FIFO (named pipe), not a regular file")


def test_a_fifo_model_keras_in_a_finished_run_is_written_again_not_waited_on(finished, tmp_path):
    script, done = finished
    out = copy_run(done, tmp_path / "run")
    model = out / "model.keras"
    model.unlink()
    os.mkfifo(model)
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "model.keras is missing or unreadable: writing again" in result.stdout
    assert model.is_file()
