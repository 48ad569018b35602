"""A run's folder is one run's: a second run is locked out, --fresh removes only a tfgen run,
a forged or emptied checkpoints folder loses nothing, and a full disk or a read-only folder
is one line naming the path (the last good checkpoint stays restorable).

Each case runs a generated script the way a user does (a subprocess).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import base_spec, build, read_history, snapshot

from tfgen.processes import wait_until_stopped

pytestmark = pytest.mark.slow
LOCK = ".tfgen.lock"


def run(script, *args, cwd=None, timeout=300):
    command = [sys.executable, str(script), *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def error_lines(result):
    """The error lines: `error: ...`, or argparse's `<script>: error: ...`."""
    return [line for line in result.stderr.splitlines() if line.startswith("error: ") or ".py: error: " in line]


def assert_one_line_error(result, *phrases, code=1):
    assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = error_lines(result)
    assert len(errors) == 1, result.stderr[-2000:]
    for phrase in phrases:
        assert phrase in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    """One small script (keep 1: every save prunes the one before) built once for the module."""
    spec = base_spec()
    spec["train"] = {"epochs": 2}
    spec["checkpoint"] = {"every_epochs": 1, "keep": 1}
    return build(tmp_path_factory.mktemp("build"), spec)


@pytest.fixture(scope="module")
def finished(script, tmp_path_factory):
    """A finished run of `script` (2 epochs): each test works on a copy (`copy_run`)."""
    out = tmp_path_factory.mktemp("finished") / "run"
    result = run(script, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    return out


def copy_run(finished, folder):
    """A copy of the finished run at `folder`."""
    shutil.copytree(finished, folder, symlinks=True)
    return folder


@pytest.fixture
def disk(tmp_path):
    """A small tmpfs of our own at tmp_path/disk (its size set per test), unmounted after."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {made.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def remount(mount, options):
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)


@contextlib.contextmanager
def read_only(folder):
    """`folder` read-only for every process, root included (a read-only bind mount over it)."""
    made = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot bind-mount here (needs root): {made.stderr.decode().strip()}")
    try:
        remount(folder, "bind,ro")
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_second_run_in_a_live_runs_folder_exits_at_once_naming_the_pid_and_changes_nothing(script, tmp_path):
    out = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, str(script), "--output-dir", str(out), "--epochs", "100000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    try:
        deadline = time.monotonic() + 120
        # Epoch 1's row and then its checkpoint (the row is written first): the run has saved.
        while not list(out.glob("checkpoints/ckpt-*.index")) and time.monotonic() < deadline:
            time.sleep(0.2)
        first.send_signal(signal.SIGSTOP)  # mid-run, and still: the folder stays as it is
        # Each thread stops in turn: one may finish a write first.
        assert wait_until_stopped(first.pid, timeout=30), f"process {first.pid} did not stop within 30 s"
        before = snapshot(out)
        second = run(script, "--output-dir", str(out), "--epochs", "3")
        assert_one_line_error(second, str(out), f"pid {first.pid}", "another run")
        assert "Resuming" not in second.stdout and "Epoch" not in second.stdout
        assert snapshot(out) == before
        fresh = run(script, "--output-dir", str(out), "--fresh")
        assert_one_line_error(fresh, f"pid {first.pid}")
        assert snapshot(out) == before
    finally:
        first.kill()
        first.wait()
    # SIGKILL released the lock: the next run takes the folder and resumes.
    rerun = run(script, "--output-dir", str(out), "--epochs", "1")
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "Already finished" in rerun.stdout
    assert (out / LOCK).read_text().strip() != str(first.pid)


def test_an_empty_output_dir_is_a_usage_error_and_fresh_leaves_the_current_folder_alone(script, tmp_path):
    mine = tmp_path / "project"
    (mine / "checkpoints").mkdir(parents=True)
    (mine / "checkpoints" / "notes.txt").write_text("mine")
    (mine / "model.keras").write_text("mine")
    before = snapshot(mine)
    result = run(script, "--output-dir", "", "--fresh", cwd=mine)
    assert_one_line_error(result, "--output-dir", "empty", code=2)
    assert snapshot(mine) == before


@pytest.mark.parametrize(
    "record",
    [None, '{"name": "mine", "spec": "mine.yaml"}'],
    ids=["no-run-json", "another-programs-run-json"],
)
def test_fresh_refuses_a_folder_that_is_not_a_tfgen_run_and_removes_nothing(script, tmp_path, record):
    out = tmp_path / "mine"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "checkpoint").write_text("my own file")
    (out / "history.jsonl").write_text("my own lines\n")
    if record is not None:
        (out / "run.json").write_text(record)
    before = snapshot(out)
    result = run(script, "--output-dir", str(out), "--fresh")
    assert_one_line_error(result, str(out), "not a tfgen run", "checkpoints")
    assert "discard" not in result.stdout
    assert snapshot(out) == before


def test_fresh_removes_a_tfgen_run_then_says_so_and_keeps_the_lock_file(script, finished, tmp_path):
    out = copy_run(finished, tmp_path / "run")
    assert (out / LOCK).is_file()
    result = run(script, "--output-dir", str(out), "--epochs", "1", "--fresh")
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"--fresh: discarded the previous run in {out}" in result.stdout
    assert [row["epoch"] for row in read_history(out)] == [1]
    assert (out / LOCK).is_file()


def test_a_forged_checkpoint_list_never_makes_the_run_delete_files_outside_its_folder(script, finished, tmp_path):
    out = copy_run(finished, tmp_path / "run")
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in (
        "ckpt-1.index",
        "ckpt-1.data-00000-of-00001",
        "ckpt-7.index",
        "ckpt-7.data-00000-of-00001",
    ):
        (victim / name).write_bytes(b"precious")
    (out / "checkpoints" / "checkpoint").write_text(
        f'model_checkpoint_path: "ckpt-2"\n'
        f'all_model_checkpoint_paths: "{victim}/ckpt-1"\n'
        f'all_model_checkpoint_paths: "../../victim/ckpt-7"\n'
        f'all_model_checkpoint_paths: "*"\n'
        f'all_model_checkpoint_paths: "ckpt-2"\n'
        + "all_model_checkpoint_timestamps: 2.0\n" * 4  # newer than the last preserved: pruned
        + "last_preserved_timestamp: 1.0\n"
    )
    result = run(script, "--output-dir", str(out), "--epochs", "5")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Resuming from" in result.stdout and "ckpt-2 (epoch 3" in result.stdout
    assert sorted(p.name for p in victim.iterdir()) == [
        "ckpt-1.data-00000-of-00001",
        "ckpt-1.index",
        "ckpt-7.data-00000-of-00001",
        "ckpt-7.index",
    ]
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3, 4, 5]
    assert sorted(p.name for p in (out / "checkpoints").glob("ckpt-*.index")) == ["ckpt-5.index"]


def test_history_rows_with_no_readable_checkpoint_are_refused_and_nothing_changes(script, finished, tmp_path):
    out = copy_run(finished, tmp_path / "run")
    for index in (out / "checkpoints").glob("*.index"):
        index.unlink()
    before = snapshot(out)
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert_one_line_error(result, str(out), "2 history rows", "no checkpoint", "--fresh")
    assert snapshot(out) == before


def test_a_history_that_is_not_utf8_is_one_line_naming_the_file(script, finished, tmp_path):
    out = copy_run(finished, tmp_path / "run")
    history = out / "history.jsonl"
    history.write_bytes(history.read_bytes() + b'{"epoch": 3, "loss": "\xff"}\n')
    before = snapshot(out)
    result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert_one_line_error(result, str(history), "UTF-8", "--fresh")
    assert snapshot(out) == before


def test_a_full_disk_is_one_line_naming_the_file_and_the_run_resumes_from_the_last_good_checkpoint(
    script, finished, disk
):
    out = copy_run(finished, disk / "run")
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:  # every free block taken: the next checkpoint cannot be written
            f.write(b"\0" * 4096)
    result = run(script, "--output-dir", str(out), "--epochs", "4")
    # run.json is rewritten (through a partial file) as the run resumes: the full disk stops it there.
    line = assert_one_line_error(result, str(out / "run.json"), "No space left on device", "free space")
    assert "tempstate" not in line
    assert [row["epoch"] for row in read_history(out)] == [1, 2]
    filler.unlink()
    resumed = run(script, "--output-dir", str(out), "--epochs", "4")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "ckpt-2 (epoch 3" in resumed.stdout
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3, 4]


def test_a_read_only_checkpoints_folder_is_one_line_naming_it_and_the_run_resumes_after(script, finished, tmp_path):
    out = copy_run(finished, tmp_path / "run")
    with read_only(out / "checkpoints"):
        result = run(script, "--output-dir", str(out), "--epochs", "3")
    assert_one_line_error(result, str(out / "checkpoints"), "Read-only file system", "writable")
    # The row of epoch 3 is written before its checkpoint (whose save failed): the rerun redoes it.
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3]
    resumed = run(script, "--output-dir", str(out), "--epochs", "3")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "ckpt-2 (epoch 3" in resumed.stdout
    assert [row["epoch"] for row in read_history(out)] == [1, 2, 3]


def test_fresh_on_a_read_only_folder_is_one_line_naming_the_path_and_claims_nothing(script, finished, disk):
    out = copy_run(finished, disk / "run")
    remount(disk, "ro")
    before = snapshot(out)
    finished = run(script, "--output-dir", str(out))
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "Already finished" in finished.stdout
    result = run(script, "--output-dir", str(out), "--fresh")
    line = assert_one_line_error(result, str(out / "checkpoints"), "cannot be removed", "Read-only file system")
    assert "discard" not in result.stdout
    assert snapshot(out) == before, line
