"""Packaging: `pip install tfgen` is the generator alone; the `train` extra is the runtime
(`tfgen-runtime`, built from runtime/), which brings the training stack and nothing of the generator."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SPECS, TRAINING_STACK_MODULES, run_tfgen

from tfgen.generate.runtime import RUNTIME_VERSION

TRAIN_STACK = {"tensorflow", "keras", "tensorboard", "numpy", "scikit-learn"}
GENERATOR = {"pydantic", "pyyaml", "jinja2", "black"}


def _project(folder=ROOT) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> tuple[str, set[str]]:
    """A requirement's normalised distribution name and the extras it asks for."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    assert match, requirement
    extras = {extra.strip() for extra in (match.group(2) or "").split(",") if extra.strip()}
    return re.sub(r"[-_.]+", "-", match.group(1)).lower(), extras


def _names(requirements: list[str]) -> set[str]:
    return {_name(requirement)[0] for requirement in requirements}


def _reached(project: dict, extra: str, seen: frozenset = frozenset()) -> set[str]:
    """Every distribution `pip install "tfgen[extra]"` asks for, through self-references like tfgen[train]."""
    names = _names(project["dependencies"])
    for requirement in project["optional-dependencies"][extra]:
        name, extras = _name(requirement)
        if name == project["name"]:
            for inner in extras - seen - {extra}:
                names |= _reached(project, inner, seen | {extra})
        else:
            names.add(name)
    return names


def test_base_install_is_the_generator_alone():
    base = _names(_project()["dependencies"])
    assert base >= GENERATOR, base
    assert not base & TRAIN_STACK, f"`pip install tfgen` would pull in {sorted(base & TRAIN_STACK)}"


def test_train_extra_is_the_runtime_which_holds_the_training_stack_and_no_generator():
    assert _names(_project()["optional-dependencies"]["train"]) == {"tfgen-runtime"}
    runtime = _names(_project(ROOT / "runtime")["dependencies"])
    assert runtime >= TRAIN_STACK, sorted(TRAIN_STACK - runtime)
    assert not runtime & (GENERATOR | {"tfgen", "pyflakes"}), sorted(runtime & GENERATOR)


def test_dev_extra_reaches_everything_the_tests_need():
    project = _project()
    dev = _reached(project, "dev") | _names(_project(ROOT / "runtime")["dependencies"])
    needed = TRAIN_STACK | GENERATOR | {"pytest", "hypothesis", "matplotlib", "ruff"}
    assert needed <= dev, sorted(needed - dev)
    # ruff is pinned to one minor release, as black is to one style year: their defaults move.
    (ruff,) = [r for r in project["optional-dependencies"]["dev"] if _name(r)[0] == "ruff"]
    assert re.sub(r"\s", "", ruff.split(";")[0].split("#")[0]) == "ruff>=0.17.6,<0.18", ruff
    (black,) = [r for r in project["dependencies"] if _name(r)[0] == "black"]
    assert "<" in black, black


def test_readme_install_command_installs_the_dev_extra():
    assert '-e ".[dev]"' in (ROOT / "README.md").read_text()
    assert '-e ".[dev]"' in (ROOT / ".ci" / "run").read_text()


def test_ci_installs_the_runtime_as_users_get_it():
    """Not editable: a test that passes only on runtime/'s files in place (not on the installed
    package's) fails in CI."""
    assert "pip install --quiet ./runtime -e " in (ROOT / ".ci" / "run").read_text()


@pytest.mark.slow  # builds in another process, its imports blocked
def test_build_and_check_work_without_tensorflow_keras_or_numpy(blocked_build):
    result, project, env = blocked_build
    for module in TRAINING_STACK_MODULES:  # the blocker really blocks
        probe = subprocess.run(
            [sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True, check=False
        )
        assert probe.returncode != 0 and "blocked" in probe.stderr, (module, probe.stderr)
    probe = subprocess.run(
        [sys.executable, "-c", "import tfgen_runtime"], env=env, capture_output=True, text=True, check=False
    )
    assert probe.returncode != 0 and "blocked" in probe.stderr, probe.stderr  # nor the runtime
    assert result.returncode == 0, result.stderr
    out = project / "generated"
    assert sorted(path.name for path in out.iterdir()) == sorted(f"{spec.stem}.py" for spec in SPECS)
    checked = run_tfgen("check", *[f"specs/{spec.name}" for spec in SPECS], cwd=project, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert run_tfgen("--help", env=env).returncode == 0


def test_vendor_without_the_runtime_installed_is_one_line_naming_the_install(blocked_build):
    _, project, env = blocked_build
    result = run_tfgen("build", "specs/digits.yaml", "--out", "vendored", "--vendor", cwd=project, env=env)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "tfgen: error: --vendor copies the installed tfgen-runtime, and none is installed: "
        f'pip install "tfgen-runtime=={RUNTIME_VERSION}"\n'
    )
    assert not (project / "vendored").exists()


@pytest.mark.slow  # tfgen and the runtime installed as copies of their packages, away from this checkout
def test_an_installed_tfgen_vendors_the_installed_runtime(tmp_path):
    """The wheels are the tfgen package (templates inside it) and the tfgen_runtime package: copies
    of them alone, away from this checkout, vendor every file of the runtime."""
    assert _project_file()["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["tfgen"]
    assert _project_file(ROOT / "runtime")["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [
        "tfgen_runtime"
    ]
    installed = tmp_path / "site"
    for package in (ROOT / "tfgen", ROOT / "runtime" / "tfgen_runtime"):
        shutil.copytree(package, installed / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "project").mkdir()
    shutil.copy(ROOT / "specs" / "digits.yaml", tmp_path / "project" / "digits.yaml")
    result = subprocess.run(
        [sys.executable, "-m", "tfgen", "build", "digits.yaml", "--out", "out", "--vendor"],
        cwd=tmp_path / "project",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(installed)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    written = sorted(path.name for path in (tmp_path / "project" / "out" / "tfgen_runtime").iterdir())
    assert written == sorted(path.name for path in (ROOT / "runtime" / "tfgen_runtime").glob("*.py"))
    for name in written:
        ours = (tmp_path / "project" / "out" / "tfgen_runtime" / name).read_text()
        assert ours.split("\n", 1)[1] == (ROOT / "runtime" / "tfgen_runtime" / name).read_text()


def _project_file(folder=ROOT) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((folder / "pyproject.toml").read_text())
