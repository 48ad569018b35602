"""Code a spec names (`python` sources, `model.builder`): `validate`, `build`, `check`, `diff` and
`lint` never import it; `validate --deep`, `smoke` and the generated scripts import only modules of
the project and the libraries tfgen uses, unless given --trust. Real processes, planted `touch`es."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, base_spec, run_tfgen, tfgen_here, write_module

QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3"}  # no C++ log lines (CUDA probing) among the error lines
ANY = "; pass --trust to allow any module"
LOADERS = "sklearn.datasets:load_*, sklearn.datasets:make_*, tfgen.datasets:*, keras.datasets.*:load_data"
DATA = f"a data function comes from a module of this project or is a known loader ({LOADERS})"
BUILDER = "a model builder comes from a module of this project"
LAYER = "a layer is a keras.layers.Layer subclass from keras, tensorflow or a module of this project"
BUILD = """import keras
from pathlib import Path


def build():
    Path({marker!r}).write_text("built")
    inputs = keras.Input((8,), name="features")
    return keras.Model(inputs, {{"label": keras.layers.Dense(3)(inputs)}})
"""
LOAD = """import numpy as np


def load():
    return np.zeros((64, 8), "float32"), np.zeros(64, "int32")
"""


def _planted(tmp_path: Path) -> tuple[str, Path, Path]:
    """specs/x.yaml: its data from `subprocess:run` and its model from `os:system`, each a `touch`
    of a marker file; returns the spec's path (relative to tmp_path) and the two markers."""
    from_source, from_builder = tmp_path / "from_source", tmp_path / "from_builder"
    source = {"type": "python", "function": "subprocess:run", "kwargs": {"args": ["touch", str(from_source)]}}
    spec = base_spec(data={"train": {"source": source, "batch_size": 32}, "validation_split": 0.25})
    spec["model"] = {
        "inputs": {"features": {"shape": [8]}},
        "builder": "os:system",
        "kwargs": {"command": f"touch {from_builder}"},
    }
    spec["train"]["epochs"] = 1
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "x.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return "specs/x.yaml", from_source, from_builder


def _at(spec: Path, key: str, value: str) -> str:
    """`line:column` (1-based) of `value` on the line of `spec` that holds `key: value`."""
    lines = spec.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{key}: {value}"))
    return f"{number + 1}:{lines[number].index(value) + 1}"


def _refused(tmp_path: Path) -> list[str]:
    """The two lines `validate --deep` prints for the planted spec."""
    spec = tmp_path / "specs" / "x.yaml"
    return [
        (
            f"specs/x.yaml:{_at(spec, 'function', 'subprocess:run')}: data.train.source.function: subprocess:run: "
            f"refusing to import `subprocess`: {DATA}{ANY}"
        ),
        (
            f"specs/x.yaml:{_at(spec, 'builder', 'os:system')}: model.builder: os:system: refusing to import `os`: "
            f"{BUILDER}{ANY}"
        ),
    ]


def _script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "generated/x.py", "--output-dir", str(tmp_path / "run"), *args]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


def test_validate_build_check_diff_and_lint_never_import_spec_named_code(tmp_path):
    """Run by the CLI's main in this process: a call of the planted code touches its marker here
    as it would in a process of its own."""
    spec, from_source, from_builder = _planted(tmp_path)
    for command, code in (
        (["validate", spec], 0),
        (["build", spec], 0),
        (["check", spec], 0),
        (["diff", spec], 0),
        (["lint", "generated"], 0),
    ):
        result = tfgen_here(*command, cwd=tmp_path)
        assert result.returncode == code, (command, result.stderr)
    assert (tmp_path / "generated" / "x.py").exists()
    assert not from_source.exists() and not from_builder.exists()


def test_trust_is_explained_in_the_help_of_validate_and_smoke():
    validate = run_tfgen("validate", "--help").stdout
    smoke = run_tfgen("smoke", "--help").stdout
    assert "--trust" in validate and "--trust" in smoke
    assert "passes --trust on" in " ".join(smoke.split())
    for text in (validate, smoke):
        assert "never import them" in " ".join(text.split())


@pytest.mark.slow
def test_deep_refuses_os_system_and_subprocess_run_in_located_lines_and_runs_neither(tmp_path):
    spec, from_source, from_builder = _planted(tmp_path)
    result = run_tfgen("validate", "--deep", spec, cwd=tmp_path, env=QUIET)
    assert result.returncode == 2
    assert result.stderr.splitlines() == _refused(tmp_path)
    assert not from_source.exists() and not from_builder.exists()


@pytest.mark.slow
def test_deep_with_trust_imports_both_and_calls_the_builder(tmp_path):
    spec, from_source, from_builder = _planted(tmp_path)
    result = run_tfgen("validate", "--deep", "--trust", spec, cwd=tmp_path, env=QUIET)
    assert result.returncode == 2  # os.system returns an int, not a model
    assert "model.builder: `os:system` returned a int, not a keras.Model" in result.stderr
    assert "refusing" not in result.stderr
    assert from_builder.exists()
    assert not from_source.exists()  # --deep imports a source, never calls it


@pytest.mark.slow
def test_deep_imports_project_modules_without_trust(tmp_path):
    """A builder beside the spec (it writes a marker) and a source in the working directory."""
    marker = tmp_path / "built"
    spec = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "project_data:load"}, "batch_size": 32},
            "validation_split": 0.25,
        }
    )
    spec["model"] = {"inputs": {"features": {"shape": [8]}}, "builder": "project_model:build"}
    write_module(tmp_path / "specs", "project_model", BUILD.format(marker=str(marker)))
    write_module(tmp_path, "project_data", LOAD)
    (tmp_path / "specs" / "ok.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = run_tfgen("validate", "--deep", "specs/ok.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "built"


@pytest.mark.slow
def test_deep_refuses_modules_outside_the_project_in_site_packages_and_reexported_builtins(tmp_path):
    """On PYTHONPATH but outside the working directory and the spec's folder; in a site-packages
    folder inside the project; `from os import system` in a project module."""
    elsewhere = tmp_path / "elsewhere"
    vendored = tmp_path / "work" / ".venv" / "lib" / "site-packages"
    marker = tmp_path / "shell"
    write_module(elsewhere, "elsewhere_data", LOAD)
    write_module(vendored, "vendored_model", BUILD.format(marker=str(marker)))
    write_module(tmp_path / "work", "project_shell", "from os import system\n")
    first = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "elsewhere_data:load"}, "batch_size": 32},
            "validation_split": 0.25,
        }
    )
    first["model"] = {"inputs": {"features": {"shape": [8]}}, "builder": "vendored_model:build"}
    second = {
        **first,
        "data": base_spec()["data"],
        "model": {**first["model"], "builder": "project_shell:system", "kwargs": {"command": f"touch {marker}"}},
    }
    (tmp_path / "work" / "a.yaml").write_text(yaml.safe_dump(first, sort_keys=False))
    (tmp_path / "work" / "b.yaml").write_text(yaml.safe_dump(second, sort_keys=False))
    path = os.pathsep.join(filter(None, [str(elsewhere), str(vendored), os.environ.get("PYTHONPATH")]))
    result = run_tfgen(
        "validate", "--deep", "a.yaml", "b.yaml", cwd=tmp_path / "work", env={**QUIET, "PYTHONPATH": path}
    )
    assert result.returncode == 2
    lines = [line.split(": ", 2)[2] for line in result.stderr.splitlines()]
    assert lines == [
        f"elsewhere_data:load: refusing to import `elsewhere_data`: {DATA}{ANY}",
        f"vendored_model:build: refusing to import `vendored_model`: {BUILDER}{ANY}",
        f"project_shell:system: {BUILDER}, and this is defined in `posix`{ANY}",
    ]
    assert not marker.exists()


@pytest.mark.slow
def test_script_refuses_each_in_one_line_and_runs_both_with_trust(tmp_path):
    spec, from_source, from_builder = _planted(tmp_path)
    assert tfgen_here("build", spec, cwd=tmp_path).returncode == 0
    data = _script(tmp_path)  # load_data calls the source first
    model = _script(tmp_path, "--synthetic")  # no source: build_model calls the builder
    for result, line in (
        (data, f"error: subprocess:run: refusing to import `subprocess`: {DATA}{ANY}"),
        (model, f"error: os:system: refusing to import `os`: {BUILDER}{ANY}"),
    ):
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1] == line
    assert not from_source.exists() and not from_builder.exists()
    _script(tmp_path, "--trust")
    assert from_source.exists() and not from_builder.exists()
    _script(tmp_path, "--synthetic", "--trust")
    assert from_builder.exists()


@pytest.mark.slow
def test_smoke_refuses_the_builder_and_the_source_and_passes_trust_on_to_the_script(tmp_path):
    """Synthetic data (the default) calls only the builder; --real-data calls the source first."""
    spec, from_source, from_builder = _planted(tmp_path)
    synthetic = tfgen_here("smoke", spec, cwd=tmp_path)  # smoke's main here; the scripts are processes
    real = tfgen_here("smoke", "--real-data", "8", spec, cwd=tmp_path)
    for result, line in (
        (synthetic, f"error: os:system: refusing to import `os`: {BUILDER}{ANY}"),
        (real, f"error: subprocess:run: refusing to import `subprocess`: {DATA}{ANY}"),
    ):
        assert result.returncode == 1
        assert result.stdout.splitlines()[0] == f"FAIL specs/x.yaml: {line} (first run)"
    assert not from_source.exists() and not from_builder.exists()
    for options, marker in ((["--trust"], from_builder), (["--trust", "--real-data", "8"], from_source)):
        result = tfgen_here("smoke", *options, spec, cwd=tmp_path)
        assert result.returncode == 1  # os.system returns an int, subprocess.run no arrays
        assert "refusing" not in result.stdout
        assert marker.exists()


@pytest.mark.slow
def test_the_digits_script_loads_its_sklearn_data_without_trust(tmp_path):
    command = [
        sys.executable,
        "generated/digits.py",
        "--epochs",
        "1",
        "--steps-per-epoch",
        "1",
        "--output-dir",
        str(tmp_path / "run"),
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "history.jsonl").exists()


OWN_LAYER = """import keras
from pathlib import Path

Path({marker!r}).write_text("imported")


class Scale(keras.layers.Layer):
    def call(self, x):
        return x * 2.0
"""


@pytest.mark.slow
def test_script_refuses_an_own_layer_from_outside_the_project_in_one_line_and_imports_it_with_trust(tmp_path):
    """`type: "module:Name"` follows the builders' rule: on PYTHONPATH but outside the project, refused."""
    elsewhere, marker = tmp_path / "elsewhere", tmp_path / "imported"
    write_module(elsewhere, "elsewhere_layers", OWN_LAYER.format(marker=str(marker)))
    spec = base_spec()
    spec["model"]["layers"] = [{"type": "elsewhere_layers:Scale"}, *spec["model"]["layers"]]
    spec["train"]["epochs"] = 1
    work = tmp_path / "work"  # the project: `elsewhere` is outside it
    (work / "specs").mkdir(parents=True)
    (work / "specs" / "x.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert tfgen_here("build", "specs/x.yaml", cwd=work).returncode == 0
    env = {
        **os.environ,
        **QUIET,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(elsewhere), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "generated/x.py", "--output-dir", str(tmp_path / "run"), "--steps-per-epoch", "1"]
    refused = subprocess.run(command, cwd=work, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert (
        refused.stderr.splitlines()[-1]
        == f"error: elsewhere_layers:Scale: refusing to import `elsewhere_layers`: {LAYER}{ANY}"
    )
    assert not marker.exists()
    trusted = subprocess.run(
        [*command, "--trust"], cwd=work, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert marker.exists()
