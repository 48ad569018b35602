"""`tfgen validate --deep`: specs valid in structure whose Keras objects or model fail, pinned.

The TensorFlow-importing tests are slow; they run every pinned case in this one process (Keras
imported once) and the command line once, on the example specs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, SPECS, import_blocker, run_tfgen, write_module

from tfgen.check.modules import LookupFailed, import_function
from tfgen.cli import main

CASES = sorted((ROOT / "tests" / "check" / "deep_invalid_specs").glob("*.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("spec", CASES, ids=lambda p: p.stem)
def test_deep_invalid_spec_output_is_pinned(spec, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    relative = spec.relative_to(ROOT).as_posix()
    assert main(["validate", relative]) == 0, "a deep case must be valid in structure"
    capsys.readouterr()
    assert main(["validate", "--deep", relative]) == 2
    assert capsys.readouterr().err == spec.with_suffix(".expected").read_text()


@pytest.mark.slow
def test_deep_skips_the_adapt_key_and_accepts_an_adapted_normalization(monkeypatch):
    from types import SimpleNamespace

    from tfgen.check.deep import _Deep, import_keras
    from tfgen.generate.code import Adapted
    from tfgen.generate.wiring import Wire
    from tfgen.spec.loader import Located
    from tfgen.spec.models.base import LayerSpec

    checker = _Deep(import_keras(), Located({}, "x.yaml"), SimpleNamespace(precision="mixed_float16"), ROOT)
    wire = Wire(Adapted(), mixed=True, source="x", variable="x", result="x")
    [step] = wire.stack([LayerSpec(type="Normalization", adapt=True, axis=-1)], ("model", "layers"))
    layer = checker.layer(step.item, step.loc, step.code)
    assert type(layer).__name__ == "Normalization" and not checker.issues
    # Built as the script builds it: named for the adaptation, computing in float32.
    assert layer.name == "adapted_normalization" and layer.dtype_policy.compute_dtype == "float32"


@pytest.mark.slow
def test_a_builder_next_to_its_spec_builds_and_is_summarised(tmp_path, capsys, monkeypatch):
    """The builder module sits beside the spec (not on sys.path, not in the working directory)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    (tmp_path / "tfgen_case_builder.py").write_text(
        "import keras\n\n\ndef build(units):\n"
        "    x = keras.Input((8,), name='x')\n"
        "    return keras.Model({'x': x}, {'y': keras.layers.Dense(1)(keras.layers.Dense(units)(x))})\n"
    )
    spec = (CASES[0].parent / "builder_raises.yaml").read_text()
    spec = spec.replace("deep_case_modules:broken_model", "tfgen_case_builder:build").replace("width: 7", "units: 4")
    (tmp_path / "built.yaml").write_text(spec)
    assert main(["validate", "--summary", str(tmp_path / "built.yaml")]) == 0
    out = capsys.readouterr().out
    assert ": model `built`\n" in out and "41 parameters (41 trainable, 0 not)" in out  # 8*4+4 + 4*1+1


@pytest.mark.slow
def test_examples_deep_validate_with_summaries_in_one_clean_process():
    """The example specs pass; stderr is empty (TensorFlow's start-up lines are kept off it, and
    its C++ logs are quiet unless TF_CPP_MIN_LOG_LEVEL says otherwise)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    specs = [s.relative_to(ROOT).as_posix() for s in SPECS]
    command = [sys.executable, "-m", "tfgen", "validate", "--deep", "--summary", *specs]
    result = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    for spec in SPECS:
        assert f"{spec.relative_to(ROOT).as_posix()}: model `{spec.stem}`" in result.stdout
    assert "network `generator`\n" in result.stdout and "network `discriminator`\n" in result.stdout  # gan.yaml
    assert "113,258 parameters (112,682 trainable, 576 not)" in result.stdout  # cifar's ResNet-style CNN
    assert result.stdout.endswith(f"{len(SPECS)} spec(s) valid (--deep: built with Keras)\n")


@pytest.mark.slow
def test_deep_accepts_a_custom_string_layer_that_the_built_script_trains_with(tmp_path, monkeypatch, capsys):
    """A `standardize` stand-in of the user's own on a `dtype: string` input: --deep refused it
    (as if it were a numeric layer) while build and the script ran it; both now agree."""
    cases = ROOT / "tests" / "check" / "deep_invalid_specs"
    # Under another name: the pinned case's module may be imported already, from outside this project.
    (tmp_path / "text_layers.py").write_text((cases / "string_layers_modules.py").read_text())
    (tmp_path / "texts_data.py").write_text(
        "import numpy as np\n\n\ndef load():\n"
        "    words = np.array(['Good!', 'BAD.', 'good', 'bad'] * 16, dtype=object)\n"
        "    return words, (np.arange(64) % 2).astype('int32')\n"
    )
    spec = yaml.safe_load((cases / "custom_layer_on_strings.yaml").read_text())
    spec["data"]["train"]["source"] = {"type": "python", "function": "texts_data:load"}
    spec["data"]["validation_split"] = 0.25
    del spec["model"]["layers"][1]  # Double, which computes on numbers
    spec["model"]["layers"][0]["type"] = "text_layers:Standardize"
    (tmp_path / "texts.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--deep", "texts.yaml"]) == 0, capsys.readouterr().err
    assert main(["build", "texts.yaml"]) == 0
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    script = [sys.executable, "generated/texts.py", "--output-dir", "run"]
    result = subprocess.run(script, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Epoch 1/1" in result.stdout and (tmp_path / "run" / "model.keras").is_file()


def test_every_deep_case_points_at_its_own_file():
    for spec in CASES:
        lines = spec.with_suffix(".expected").read_text().splitlines()
        assert lines and all(line.startswith(spec.relative_to(ROOT).as_posix() + ":") for line in lines)


def test_plain_validate_never_imports_tensorflow(tmp_path):
    env = import_blocker(tmp_path / "blocker")
    result = run_tfgen("validate", *[s.relative_to(ROOT).as_posix() for s in SPECS], env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_deep_without_keras_says_what_it_needs_in_one_line(tmp_path):
    result = run_tfgen("validate", "--deep", SPECS[0].relative_to(ROOT).as_posix(), env=import_blocker(tmp_path / "b"))
    assert result.returncode == 2
    assert result.stderr.startswith('tfgen: error: --deep needs TensorFlow and Keras (pip install "tfgen[train]")')
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_deep_runs_the_constructor_calls_of_the_generated_script(spec, monkeypatch):
    """Every constructor deep validation runs is a call the committed script makes, verbatim."""
    from tfgen.check import deep
    from tfgen.paths import display_path
    from tfgen.spec.resolve import resolve
    from tfgen.spec.validate import validate

    monkeypatch.chdir(ROOT)
    calls = []
    evaluate = deep._Deep.evaluate
    monkeypatch.setattr(
        deep._Deep, "evaluate", lambda self, code, *a, **k: calls.append(code) or evaluate(self, code, *a, **k)
    )
    doc = resolve(spec, display_path(spec))
    deep.deep_validate(doc, validate(doc), spec.parent)

    def squashed(text):
        return "".join(text.split()).replace(",)", ")").replace(",]", "]").replace("'", '"')

    script = squashed((ROOT / "generated" / f"{spec.stem}.py").read_text())
    assert len(calls) >= 4
    for code in calls:
        assert squashed(code) in script, code


# --- the module lookup rule: sys.path, then the working directory, then the spec's directory ---


def test_a_module_is_found_in_the_working_directory_before_the_spec_directory(tmp_path, monkeypatch):
    write_module(tmp_path / "work", "tfgen_case_where", "def where():\n    return 'work'\n")
    write_module(tmp_path / "specs", "tfgen_case_where", "def where():\n    return 'specs'\n")
    write_module(tmp_path / "specs", "tfgen_case_beside", "def where():\n    return 'beside'\n")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    assert import_function("tfgen_case_where:where", tmp_path / "specs", "data")() == "work"
    assert import_function("tfgen_case_beside:where", tmp_path / "specs", "data")() == "beside"
    assert str(tmp_path / "specs") not in sys.path  # the path is restored


def test_lookup_failures_are_one_line_and_name_where_it_looked(tmp_path, monkeypatch):
    write_module(tmp_path, "tfgen_case_broken", "raise RuntimeError('no config\\nsecond line')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    expected = {
        "tfgen_case_nowhere:f": "no module `tfgen_case_nowhere` (looked on sys.path, in the working directory "
        "and next to the spec in ./)",
        "tfgen_case_broken:f": "importing `tfgen_case_broken` failed: RuntimeError: no config",
        "tfgen.datasets:token_sequence": "module `tfgen.datasets` has no function `token_sequence`; did you mean "
        "`token_sequences`?",
        "tfgen.datasetz:f": "no module `tfgen.datasetz`; did you mean `tfgen.datasets`? (looked on sys.path, in "
        "the working directory and next to the spec in ./)",
    }
    for reference, message in expected.items():
        with pytest.raises(LookupFailed) as failure:
            import_function(reference, tmp_path, "data")
        assert str(failure.value) == message
