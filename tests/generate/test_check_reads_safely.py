"""`check`, `diff` and `build` read the file at a generated path only when it is a regular file
(after links) of at most 4 MiB: a FIFO, a link to /dev/zero or a huge file is one line, exit 2,
never a hang or an exhausted memory; `build` then changes nothing. Each run is a real process
with a time limit and an address-space limit, so a regression fails instead of hanging.

The process is a child forked from the test's (tfgen imported, its support package rendered),
which runs `tfgen ARGS` through the CLI's main: the limits are what the process is for, not
what is tested, so it does not start an interpreter and import tfgen again (3 CPU-s a case)."""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess

import pytest
import yaml
from conftest import base_spec, tfgen_here

LIMIT_SECONDS = 60
MEMORY = 2**30  # more address space than the child starts with; reading /dev/zero whole needs more


def _vm_size() -> int:
    """This process's address space in bytes (a worker that imported TensorFlow holds gigabytes)."""
    with open("/proc/self/status") as status:
        (kib,) = [line.split()[1] for line in status if line.startswith("VmSize:")]
    return int(kib) * 1024


def _child(write_end: int, project, args: tuple[str, ...]) -> None:
    """In the forked child: the limits, `tfgen ARGS`, its result written to the pipe; never returns."""
    try:
        limit = _vm_size() + MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        result = tfgen_here(*args, cwd=project)
        payload = [result.returncode, result.stdout, result.stderr]
    except BaseException as error:  # noqa: BLE001 - whatever it is, the test shows it
        payload = [None, "", f"the child raised {error!r}"]
    with os.fdopen(write_end, "w") as pipe:
        pipe.write(json.dumps(payload))
    os._exit(0)


def _tfgen(project, *args: str) -> subprocess.CompletedProcess:
    """`tfgen ARGS` in `project`, in a forked child killed after LIMIT_SECONDS."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(write_end, project, args)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        ready, _, _ = select.select([pipe], [], [], LIMIT_SECONDS)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        output = pipe.read() if ready else ""
    os.waitpid(pid, 0)
    assert ready, f"`tfgen {' '.join(args)}` ran longer than {LIMIT_SECONDS} s (killed)"
    code, stdout, stderr = json.loads(output)
    return subprocess.CompletedProcess(["tfgen", *args], code, stdout, stderr)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """small.yaml built into gen/ once, with the runtime vendored beside it (in this process: the
    reads under test run in limited ones)."""
    folder = tmp_path_factory.mktemp("built")
    (folder / "small.yaml").write_text(yaml.safe_dump(base_spec(), sort_keys=False))
    assert tfgen_here("build", "small.yaml", "--out", "gen", "--vendor", cwd=folder).returncode == 0
    return folder


@pytest.fixture
def project(built, tmp_path):
    """A copy of the built project, with gen/small.py then replaced by each test."""
    shutil.copytree(built, tmp_path, dirs_exist_ok=True)
    (tmp_path / "gen" / "small.py").unlink()
    return tmp_path


def _plant(target, kind: str) -> str:
    """Put `kind` at the generated path; the words that name it in the error."""
    if kind == "fifo":
        os.mkfifo(target)
        return "it is a FIFO, not a regular file"
    if kind == "dev_zero":
        target.symlink_to("/dev/zero")
        return "it is a character device, not a regular file"
    with target.open("wb") as handle:  # sparse: 5 MiB on paper, no disk used
        handle.truncate(5 * 2**20)
    return "it is larger than 4 MiB (no generated file is)"


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "oversize"])
@pytest.mark.parametrize("command", ["check", "diff"])
def test_check_and_diff_refuse_a_generated_path_that_is_not_a_small_regular_file(project, command, kind):
    why = _plant(project / "gen" / "small.py", kind)
    result = _tfgen(project, command, "small.yaml", "--out", "gen")
    assert result.returncode == 2
    assert result.stderr == f"tfgen: error: gen/small.py: cannot read the generated file: {why}\n"
    assert result.stdout == ""


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "oversize"])
def test_build_refuses_to_replace_it_and_changes_nothing(project, kind):
    target = project / "gen" / "small.py"
    why = _plant(target, kind)
    runtime = {p.name: p.read_bytes() for p in (project / "gen" / "tfgen_runtime").iterdir()}
    before = target.lstat()
    result = _tfgen(project, "build", "small.yaml", "--out", "gen", "--vendor")
    assert result.returncode == 2
    assert result.stderr == f"tfgen: error: gen/small.py: cannot write the generated file: {why}; no file was changed\n"
    after = target.lstat()
    assert (after.st_mode, after.st_ino, after.st_size) == (before.st_mode, before.st_ino, before.st_size)
    assert {
        p.name: p.read_bytes() for p in (project / "gen" / "tfgen_runtime").iterdir()
    } == runtime  # no temporary left
    assert sorted(os.listdir(project / "gen")) == ["small.py", "tfgen_runtime"]


def test_a_link_to_a_regular_file_is_followed(project):
    """Links are resolved, not refused: a generated path linking to a stale copy is stale."""
    elsewhere = project / "elsewhere.py"
    elsewhere.write_text("# an older script\n")
    (project / "gen" / "small.py").symlink_to(elsewhere)
    result = _tfgen(project, "check", "small.yaml", "--out", "gen")
    assert result.returncode == 1
    assert "hand-edited or made by another tfgen version" in result.stderr
