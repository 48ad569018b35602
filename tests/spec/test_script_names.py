"""One verdict on a spec: every refusal `build` makes of a spec, `validate` makes too, with the
same located message (the rules on the script's name live in tfgen/spec/script_rules.py)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, base_spec

from tfgen.cli import main
from tfgen.spec.script_rules import shadowed_modules

EXTRACT = ROOT / "scripts" / "extract_shadowed_modules.py"
PYTHON_SOURCE = {"type": "python", "function": "gan:load", "kwargs": {}}
# Each spec build refuses, by (case, spec file stem, spec): validate must refuse it the same way.
SPEC_REFUSALS = [
    ("named like the support package", "tfgen_runtime", base_spec()),
    ("named like a standard library module", "json", base_spec()),
    ("named like a module TensorFlow imports", "google", base_spec()),
    ("named like a module Keras imports", "h5py", base_spec()),
    (
        "its python source's module has the script's name",
        "gan",
        base_spec(data={"train": {"source": PYTHON_SOURCE, "batch_size": 8}}),
    ),
    (
        "its custom layer's module has the script's name",
        "gan",
        base_spec(model={**base_spec()["model"], "layers": [{"type": "gan:Block"}]}),
    ),
]
# Refusals of build that are not about a spec but about one command's arguments (validate has no
# `--out` and reads each spec alone): the only SpecIssue()s plan_targets makes itself.
COMMAND_REFUSALS = {
    "would overwrite a spec given to this command": "the script's path depends on --out",
    "also writes": "two specs of one name clash only when built together",
}


def _outputs(tmp_path: Path, stem: str, spec: dict, capsys) -> tuple[tuple[int, str], tuple[int, str]]:
    (tmp_path / f"{stem}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (tmp_path / "gan.py").write_text("def load():\n    return None\n")
    found = []
    for command in (["validate", f"{stem}.yaml"], ["build", f"{stem}.yaml", "--out", "generated"]):
        code = main(command)
        found.append((code, capsys.readouterr().err))
    return found[0], found[1]


@pytest.mark.parametrize(("case", "stem", "spec"), SPEC_REFUSALS, ids=[case for case, _, _ in SPEC_REFUSALS])
def test_every_build_refusal_of_a_spec_is_a_validate_refusal_with_the_same_message(
    case, stem, spec, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    validated, built = _outputs(tmp_path, stem, spec, capsys)
    assert built[0] == 2 and re.match(rf"{stem}\.yaml:\d+:\d+: ", built[1]), built
    assert validated == built
    assert not (tmp_path / "generated").exists()


def test_build_refuses_nothing_of_a_spec_beyond_validate_but_its_command_clashes():
    """plan_targets' own refusals are about the command (its --out, several specs at once);
    every refusal of a spec comes from validate (load_spec), the one rule set."""
    source = (ROOT / "tfgen" / "generate" / "build.py").read_text(encoding="utf-8")
    made = re.findall(r"SpecIssue\(\s*shown,[^)]*?f\"(.*?)\"", source, re.DOTALL)
    assert len(re.findall(r"SpecIssue\(", source)) == len(made) == len(COMMAND_REFUSALS)
    assert all(any(words in message for words in COMMAND_REFUSALS) for message in made), made
    assert not re.findall(r"raise SpecError\(", source)  # only the gathered ones, raised by spec/load.py's Issues
    assert "issues.raise_any()" in source


def test_a_python_source_module_named_like_the_script_is_refused_by_validate(tmp_path, capsys, monkeypatch):
    """gan.yaml reading `gan:load`: generated/gan.py would import itself; validate said valid."""
    monkeypatch.chdir(tmp_path)
    spec = base_spec(data={"train": {"source": PYTHON_SOURCE, "batch_size": 8}})
    validated, built = _outputs(tmp_path, "gan", spec, capsys)
    assert validated == built
    message = (
        "gan.yaml:7:17: data.train.source.function: module `gan` has the name of the script this spec "
        "generates (gan.py), which would import itself instead: rename the spec or the module\n"
    )
    assert validated == (2, message)
    assert main(["validate", "--deep", "gan.yaml"]) == 2  # --deep validates first, the same way
    assert capsys.readouterr().err == message


def _extractor():
    spec = importlib.util.spec_from_file_location("extract_shadowed_modules", EXTRACT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recorded_module_names_hold_every_module_the_generated_code_imports():
    """tensorflow_datasets too, which a tfds source's script imports (installed here or not)."""
    imported = set(_extractor().script_modules())
    assert {"tensorflow", "keras", "numpy", "tensorflow_datasets", "json", "zipfile"} <= imported
    assert imported - shadowed_modules() == {"tfgen_runtime"}  # its own rule


def test_the_recorded_module_names_hold_every_distribution_the_training_stack_requires():
    module = _extractor()
    required = set(module.kept(module.distribution_modules()))
    assert {"tensorflow", "keras", "numpy", "google", "absl", "h5py"} <= required
    assert required - shadowed_modules() == set()


@pytest.mark.slow  # imports TensorFlow and trains a model in a fresh interpreter (about 10 s)
def test_the_recorded_module_names_hold_every_module_the_training_stack_imports():
    result = subprocess.run(
        [sys.executable, str(EXTRACT), "--check"], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
