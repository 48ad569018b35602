"""User modules (`python` sources, `model.builder`) beside the spec or in the working directory
import without PYTHONPATH; when one cannot be imported, the script says so in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from conftest import base_spec, read_history, tfgen_here

pytestmark = pytest.mark.slow

LOAD = """import numpy as np


def load():
    rng = np.random.default_rng(0)
    return rng.random((128, 8)).astype("float32"), rng.integers(0, 3, 128).astype("int32")
"""
BUILD = """import keras


def build():
    inputs = keras.Input((8,), name="features")
    return keras.Model(inputs, {"label": keras.layers.Dense(3)(inputs)})
"""


def _project(tmp_path, data_module=LOAD):
    """specs/x.yaml (data from `mydata:load`, beside it; model from `mymodel:build`, expected in
    the working directory `work/`), built into generated/ by the CLI's main (in this process: the
    script's runs are the real processes under test)."""
    spec = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "mydata:load"}, "batch_size": 32},
            "validation_split": 0.25,
        }
    )
    spec["model"] = {"inputs": {"features": {"shape": [8]}}, "builder": "mymodel:build"}
    spec["train"]["epochs"] = 1
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "x.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    if data_module is not None:
        (tmp_path / "specs" / "mydata.py").write_text(data_module)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mymodel.py").write_text(BUILD)
    result = tfgen_here("build", "specs/x.yaml", "--out", "generated", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'SPEC_DIR = Path(__file__).resolve().parent / "../specs"' in (tmp_path / "generated" / "x.py").read_text()


def _run(tmp_path):
    """`python ../generated/x.py` from work/, with no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [sys.executable, "../generated/x.py", "--output-dir", str(tmp_path / "run")]
    return subprocess.run(
        command, cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_modules_beside_the_spec_and_in_the_working_directory_import_without_pythonpath(tmp_path):
    _project(tmp_path)
    result = _run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert [row["epoch"] for row in read_history(tmp_path / "run")] == [1]


def test_missing_module_is_one_line_naming_every_folder_searched(tmp_path):
    _project(tmp_path, data_module=None)
    result = _run(tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: mydata:load: no module mydata in ")
    for folder in ("generated", "work", "specs"):  # the script's folder, the working directory, the spec's
        assert str(tmp_path / folder) in line


def test_module_failing_to_import_shows_its_own_error_not_not_found(tmp_path):
    _project(tmp_path, data_module="import no_such_dependency_xyz\n")
    result = _run(tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == "error: mydata:load: importing mydata: No module named 'no_such_dependency_xyz'"
