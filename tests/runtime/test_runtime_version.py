"""A script checks the runtime it imports before anything else: a missing runtime, or another
version, is one line on stderr naming both versions and the `pip install` that fixes it (exit 2),
before TensorFlow is imported. A `--vendor` script imports its own copy, whatever is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, import_blocker, tfgen_here

from tfgen.generate.runtime import RUNTIME_VERSION, missing_line

INSTALL = f'pip install "tfgen-runtime=={RUNTIME_VERSION}"'


def fake_runtime(folder, version: str | None):
    """folder/tfgen_runtime: a runtime of `version` (its own version check), or one with no
    version module at all (None: a runtime older than the check); the folder."""
    package = folder / "tfgen_runtime"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    if version is not None:
        source = (ROOT / "runtime" / "tfgen_runtime" / "version.py").read_text()
        (package / "version.py").write_text(source.replace(f'"{RUNTIME_VERSION}"', f'"{version}"'))
    return folder


def run(script, *arguments, env=None, cwd=None, options=()):
    """`python [options] script [arguments]`, its output captured."""
    command = [sys.executable, *options, str(script), *arguments]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False)


@pytest.fixture
def script(tmp_path):
    shutil.copy(ROOT / "generated" / "digits.py", tmp_path / "digits.py")
    return tmp_path / "digits.py"


@pytest.mark.slow  # starts a script's process (a fraction of a second: the check runs first)
def test_a_script_without_its_runtime_is_one_line_naming_the_install(script):
    result = run(script, options=("-S", "-E"))  # no site-packages, no PYTHONPATH: nothing installed
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == missing_line("digits.py") + "\n"
    assert result.stderr == f"error: digits.py needs tfgen-runtime {RUNTIME_VERSION}, found none: {INSTALL}\n"


@pytest.mark.slow  # starts a script's process
def test_a_runtime_older_than_the_version_check_is_the_same_line(script, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(fake_runtime(tmp_path / "old", None))}
    result = run(script, env=env, options=("-S",))
    assert (result.returncode, result.stderr) == (2, missing_line("digits.py") + "\n")


@pytest.mark.slow  # starts a script's process
def test_another_runtime_version_is_one_line_naming_both_before_tensorflow_is_imported(script, tmp_path):
    blocker = import_blocker(tmp_path / "blocker", ("tensorflow", "keras", "numpy"))["PYTHONPATH"]
    fake = fake_runtime(tmp_path / "other", "9.9.9")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([blocker, str(fake)])}
    result = run(script, env=env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: digits.py needs tfgen-runtime {RUNTIME_VERSION}, found 9.9.9 (in {fake / 'tfgen_runtime'}): {INSTALL}\n"
    )


@pytest.mark.slow  # imports TensorFlow in two scripts' processes
def test_a_vendored_script_imports_its_own_copy_whatever_is_installed(tmp_path):
    (tmp_path / "small.yaml").write_text((ROOT / "specs" / "digits.yaml").read_text())
    (tmp_path / "pyproject.toml").write_text("")
    assert tfgen_here("build", "small.yaml", "--out", "vendored", "--vendor", cwd=tmp_path).returncode == 0
    assert tfgen_here("build", "small.yaml", "--out", "plain", cwd=tmp_path).returncode == 0
    env = {**os.environ, "PYTHONPATH": str(fake_runtime(tmp_path / "other", "9.9.9"))}
    vendored = run("vendored/small.py", "--help", env=env, cwd=tmp_path)
    assert vendored.returncode == 0, vendored.stderr
    assert "--epochs" in vendored.stdout
    plain = run("plain/small.py", "--help", env=env, cwd=tmp_path)
    assert plain.returncode == 2 and "found 9.9.9" in plain.stderr, plain.stderr
