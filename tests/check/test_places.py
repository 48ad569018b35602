"""A spec's `package.module:name` resolves only to what its place takes (a Keras kind's class, a
project function, a known loader), checked before anything is called: a library's functions
(`numpy.distutils.exec_command:exec_command`, `tensorflow.io.gfile:rmtree`) never run, whatever
place names them, in `validate --deep`, `smoke` and the script. Real gadgets, real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import base_spec, run_tfgen, tfgen_here, write_module

from tfgen.check.modules import LookupFailed, import_function, runtime_module

QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3"}
SHELL = "numpy.distutils.exec_command:exec_command"  # runs `command` in a shell
RMTREE = "tensorflow.io.gfile:rmtree"  # deletes the folder `path`
ANY = "; pass --trust to allow any module"
LOADERS = "sklearn.datasets:load_*, sklearn.datasets:make_*, tfgen.datasets:*, keras.datasets.*:load_data"
DATA = f"a data function comes from a module of this project or is a known loader ({LOADERS})"
BUILDER = "a model builder comes from a module of this project"
LAYER = "a layer is a keras.layers.Layer subclass from keras, tensorflow or a module of this project"
REGULARIZER = (
    "a regularizer is a keras.regularizers.Regularizer subclass from keras, tensorflow or a module of this project"
)
LOSS = (
    "a loss is a keras.losses.Loss subclass (from keras, tensorflow or a module of this project) or a function "
    "of a module of this project"
)
RMTREE_IS = "and this is a function defined in `tensorflow.python.lib.io.file_io`"
SHELL_IS = "and this is a function defined in `numpy.distutils.exec_command`"


def test_a_library_module_is_imported_only_where_it_may_hold_what_the_place_takes():
    """Before any import: keras and tensorflow's public modules at a Keras place (what they name is
    checked after), a known loader at a data place, nothing of a library for a builder."""
    allows = runtime_module("imports").library_allows
    assert allows("keras.losses:Huber", "losses") and allows(RMTREE, "layers")
    assert not allows(SHELL, "layers") and not allows("numpy.f2py.__main__:main", "layers")
    assert allows("sklearn.datasets:load_digits", "data") and allows("tfgen.datasets:token_sequences", "data")
    assert allows("keras.datasets.mnist:load_data", "data")
    for reference in (SHELL, RMTREE, "keras.utils:get_file", "sklearn.datasets:fetch_openml", "pickle:loads"):
        assert not allows(reference, "data"), reference
    assert not allows("keras.applications:ResNet50", "builder") and not allows(RMTREE, "builder")


def test_a_data_function_must_be_a_function_defined_in_the_project(tmp_path, monkeypatch):
    """A name of a project module that is no function, or a library's function imported into it."""
    write_module(tmp_path, "tfgen_case_data", "from shutil import rmtree\n\nload = 3\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    expected = {
        "tfgen_case_data:load": f"tfgen_case_data:load: {DATA}, and this is a int",
        "tfgen_case_data:rmtree": f"tfgen_case_data:rmtree: {DATA}, and this is defined in `shutil`{ANY}",
    }
    for reference, message in expected.items():
        with pytest.raises(LookupFailed) as failure:
            import_function(reference, tmp_path, "data")
        assert str(failure.value) == message


def _gadgets(folder: Path) -> tuple[list[str], Path, Path]:
    """Spec files each naming a gadget at another place (layers, a nested regularizer, a loss, a
    data source, a builder), all aimed at `marker` (a shell `touch`) or `victim` (a folder to
    delete); returns the specs' names, the marker and the victim."""
    marker, victim = folder / "touched", folder / "victim"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("keep")
    shell, rmtree = {"type": SHELL, "command": f"touch {marker}"}, {"type": RMTREE, "path": str(victim)}
    layers = base_spec()
    layers["model"]["layers"] = [shell, rmtree, {"type": "Dense", "units": 4, "kernel_regularizer": {**rmtree}}]
    loss = base_spec(losses={"label": {**rmtree}})
    builder = base_spec()
    builder["data"] = {
        "train": {"source": {"type": "python", "function": SHELL, "kwargs": {"command": shell["command"]}}},
        "validation_split": 0.25,
    }
    builder["data"]["train"]["batch_size"] = 32
    builder["model"] = {"inputs": {"features": {"shape": [8]}}, "builder": RMTREE, "kwargs": {"path": str(victim)}}
    names = []
    for name, spec in (("layers", layers), ("loss", loss), ("builder", builder)):
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
        names.append(f"{name}.yaml")
    return names, marker, victim


def _fields(stderr: str) -> list[str]:
    """`field: message` of each located line (the file:line:col prefix dropped)."""
    return [line.split(": ", 1)[1] for line in stderr.splitlines()]


@pytest.mark.slow
def test_deep_runs_no_library_gadget_named_as_a_layer_a_regularizer_a_loss_a_source_or_a_builder(tmp_path):
    names, marker, victim = _gadgets(tmp_path)
    result = run_tfgen("validate", "--deep", *names, cwd=tmp_path, env=QUIET)
    assert result.returncode == 2
    assert _fields(result.stderr) == [  # by file name: builder.yaml, layers.yaml, loss.yaml
        f"data.train.source.function: {SHELL}: refusing to import `numpy.distutils.exec_command`: {DATA}{ANY}",
        f"model.builder: {RMTREE}: refusing to import `tensorflow.io.gfile`: {BUILDER}{ANY}",
        f"model.layers.0.type: {SHELL}: refusing to import `numpy.distutils.exec_command`: {LAYER}{ANY}",
        f"model.layers.1.type: {RMTREE}: {LAYER}, {RMTREE_IS}",
        f"model.layers.2.kernel_regularizer.type: {RMTREE}: {REGULARIZER}, {RMTREE_IS}",
        f"losses.label.type: {RMTREE}: {LOSS}, {RMTREE_IS}",
    ]
    assert not marker.exists()
    assert (victim / "keep.txt").read_text() == "keep"


@pytest.mark.slow
def test_trust_still_takes_only_a_layer_class_where_a_layer_goes(tmp_path):
    """--trust lets the spec import any module, but a layer's place constructs only a Layer."""
    names, marker, victim = _gadgets(tmp_path)
    result = run_tfgen("validate", "--deep", "--trust", names[0], cwd=tmp_path, env=QUIET)
    assert result.returncode == 2
    assert _fields(result.stderr) == [
        f"model.layers.0.type: {SHELL}: {LAYER}, {SHELL_IS}",
        f"model.layers.1.type: {RMTREE}: {LAYER}, {RMTREE_IS}",
        f"model.layers.2.kernel_regularizer.type: {RMTREE}: {REGULARIZER}, {RMTREE_IS}",
    ]
    assert not marker.exists()
    assert (victim / "keep.txt").read_text() == "keep"


def _script(folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "generated/builder.py", "--output-dir", str(folder / "run"), *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_the_script_and_smoke_refuse_a_gadget_source_and_layer_before_calling_either(tmp_path):
    """The script's data source runs the shell gadget and its first layer is the shell gadget
    too: the script refuses each (the source first; with --synthetic, the layer), as does smoke,
    in one line, and with --trust the layer is still no Layer."""
    _, marker, victim = _gadgets(tmp_path)
    spec = yaml.safe_load((tmp_path / "builder.yaml").read_text())
    spec["model"] = yaml.safe_load((tmp_path / "layers.yaml").read_text())["model"]
    (tmp_path / "builder.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert tfgen_here("build", "builder.yaml", cwd=tmp_path).returncode == 0
    source = f"error: {SHELL}: refusing to import `numpy.distutils.exec_command`: {DATA}{ANY}"
    layer = f"error: {SHELL}: refusing to import `numpy.distutils.exec_command`: {LAYER}{ANY}"
    for result, line in (
        (_script(tmp_path), source),
        (_script(tmp_path, "--synthetic"), layer),
        (_script(tmp_path, "--synthetic", "--trust"), f"error: {SHELL}: {LAYER}, {SHELL_IS}"),
    ):
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1] == line
    smoke = tfgen_here("smoke", "builder.yaml", cwd=tmp_path)
    assert smoke.returncode == 1
    assert smoke.stdout.splitlines()[0] == f"FAIL builder.yaml: {layer} (first run)"
    assert not marker.exists()
    assert (victim / "keep.txt").read_text() == "keep"
