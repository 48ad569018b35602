"""A reader that stops reading (`tfgen build | head -1`) is not a failure of the command: no
traceback, no `error`, and the command's own verdict as its exit code (tfgen/stdout.py). Real
processes, their stdout a pipe whose reader has gone before the first write."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml
from conftest import ROOT, base_spec, run_tfgen

pytestmark = pytest.mark.slow


def _closed_stdout(*args: str, cwd) -> subprocess.CompletedProcess:
    """`tfgen ARGS` with stdout a pipe already closed at its reading end (every write: EPIPE)."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        command = [shutil.which("tfgen"), *args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # each line its own write, as on a terminal
        return subprocess.run(
            command, check=False, cwd=cwd, stdout=writing, stderr=subprocess.PIPE, text=True, env=env, timeout=60
        )
    finally:
        os.close(writing)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(base_spec(), sort_keys=False))
    shutil.copy(ROOT / "tests" / "lint" / "fixtures" / "TFG004.py", tmp_path / "pipeline.py")
    return tmp_path


def test_a_build_whose_reader_left_writes_every_file_and_exits_0_in_silence(project):
    result = _closed_stdout("build", "small.yaml", cwd=project)
    assert (result.returncode, result.stderr) == (0, "")
    assert run_tfgen("check", "small.yaml", cwd=project).returncode == 0  # every file written, whole


def test_check_validate_lint_and_diff_whose_reader_left_exit_with_their_own_verdict_in_silence(project):
    assert _closed_stdout("build", "small.yaml", cwd=project).returncode == 0
    assert (_closed_stdout("validate", "small.yaml", cwd=project).returncode) == 0
    assert (_closed_stdout("check", "small.yaml", cwd=project).returncode) == 0
    (project / "generated" / "small.py").write_text("# edited\n")
    for command, verdict in (
        (["check", "small.yaml"], 1),  # stale: said on stderr, still exit 1
        (["diff", "small.yaml"], 1),
        (["lint", "pipeline.py"], 1),  # its findings are dropped, the verdict stays
        (["--help"], 0),
    ):
        result = _closed_stdout(*command, cwd=project)
        assert result.returncode == verdict, (command, result.stderr)
        assert "Traceback" not in result.stderr and "error" not in result.stderr, command
