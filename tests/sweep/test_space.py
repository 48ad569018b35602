"""`tfgen sweep`'s search space: parsed, checked against the spec, refused in one line (no trial runs)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from conftest import base_spec, import_blocker, tfgen_here

from tfgen.spec.sweep_space import Param, parse_expression, parse_option


@pytest.mark.parametrize(
    ("expression", "param"),
    [
        ("log(1e-4,1e-2)", Param("p", "log", 1e-4, 1e-2)),
        (" uniform( 0.1 , 0.5 ) ", Param("p", "uniform", 0.1, 0.5)),
        ("int(2,8)", Param("p", "int", 2, 8)),
        ("[64,128,256]", Param("p", "choice", choices=(64, 128, 256))),
        ("[relu, gelu]", Param("p", "choice", choices=("relu", "gelu"))),
        ([0.1, 0.2], Param("p", "choice", choices=(0.1, 0.2))),
    ],
)
def test_each_form_of_expression_is_a_dimension(expression, param):
    assert parse_expression("p", expression) == param


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("log(0,1)", "a log range must be above 0"),
        ("uniform(2,1)", "the low end must be below the high end"),
        ("int(1.5,4)", "`1.5` is not an integer"),
        ("normal(0,1)", "is not a search space"),
        ("[]", "an empty list of choices"),
        ("[1, 1]", "a choice is listed twice"),
        ("[[1], 2]", "a choice must be a number, a boolean or a string"),
        ("log(1e-4,inf)", "is not a finite number"),
    ],
)
def test_a_bad_expression_says_what_is_wrong(expression, message):
    with pytest.raises(ValueError) as raised:
        parse_expression("p", expression)
    assert message in str(raised.value)


def test_a_space_option_without_a_path_is_refused():
    with pytest.raises(ValueError, match=r"expected `dotted\.path=expression`"):
        parse_option("log(1e-4,1e-2)")


def write(tmp_path, **overrides):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(base_spec(**overrides), sort_keys=False))
    return path


def one_line(result) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_bad_expression_on_the_command_line_is_one_line_naming_it(tmp_path):
    write(tmp_path)
    result = tfgen_here("sweep", "small.yaml", "--space", "optimizer.learning_rate=log(1e-4,x)", cwd=tmp_path)
    assert one_line(result) == "tfgen: error: --space optimizer.learning_rate: `log(1e-4,x)`: `x` is not a number"


def test_a_path_the_spec_does_not_set_is_one_line_naming_it(tmp_path):
    write(tmp_path)
    result = tfgen_here("sweep", "small.yaml", "--space", "model.layers.3.units=[8,16]", cwd=tmp_path)
    assert one_line(result) == (
        "tfgen: error: --space model.layers.3.units: no such place in the spec (a sweep varies values the spec sets)"
    )
    assert not (tmp_path / "sweeps").exists()


def test_a_value_the_spec_refuses_is_one_line_naming_the_field(tmp_path):
    write(tmp_path)
    result = tfgen_here("sweep", "small.yaml", "--space", "model.layers.0.units=[8,abc]", cwd=tmp_path)
    line = one_line(result)
    assert line.startswith(
        "tfgen: error: --space model.layers.0.units: 'abc' makes the spec invalid: model.layers.0.units"
    )


def test_a_bad_expression_in_the_spec_is_located_at_its_line(tmp_path):
    write(tmp_path, sweep={"space": {"optimizer.learning_rate": "log(1e-2,1e-4)"}})
    result = tfgen_here("validate", "small.yaml", cwd=tmp_path)
    line = one_line(result)
    assert line.startswith("small.yaml:")
    assert line.endswith(
        "sweep.space.optimizer.learning_rate: `log(0.01,0.0001)`: the low end must be below the high end"
    )


def test_a_path_in_the_spec_space_that_the_spec_does_not_set_is_located_at_it(tmp_path):
    path = write(tmp_path, sweep={"space": {"optimizer.momentum": "uniform(0.1,0.9)"}})
    line = one_line(tfgen_here("sweep", "small.yaml", cwd=tmp_path))
    number = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "optimizer.momentum" in text)
    assert line.startswith(f"small.yaml:{number}:")
    assert line.endswith(
        "sweep.space.optimizer.momentum: no such place in the spec (a sweep varies values the spec sets)"
    )


def test_no_space_at_all_is_one_line(tmp_path):
    write(tmp_path)
    line = one_line(tfgen_here("sweep", "small.yaml", cwd=tmp_path))
    assert line == "tfgen: error: no search space: give `--space PATH=EXPRESSION` or a `sweep.space` in the spec"


def test_sweep_without_optuna_is_one_line_naming_the_install(tmp_path):
    write(tmp_path)
    env = import_blocker(tmp_path / "blocker", ("optuna",))
    command = [sys.executable, "-m", "tfgen", "sweep", "small.yaml", "--space", "optimizer.learning_rate=[0.1,0.01]"]
    from conftest import ROOT

    env["PYTHONPATH"] += f":{ROOT}"
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert one_line(result) == 'tfgen: error: tfgen sweep needs Optuna: pip install "tfgen[sweep]" (optuna, psycopg)'


def test_a_spec_with_a_sweep_section_builds_the_same_script_and_state_as_without(tmp_path):
    plain = tfgen_here("build", str(write(tmp_path)), "--out", "a", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    swept = write(tmp_path, sweep={"space": {"optimizer.learning_rate": "log(1e-4,1e-2)"}})
    result = tfgen_here("build", str(swept), "--out", "b", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert without_spec_sha(tmp_path / "a" / "small.py") == without_spec_sha(tmp_path / "b" / "small.py")


def without_spec_sha(script) -> list[str]:
    """The script's lines but those naming the spec's sha256 (STATE_SHA256 stays)."""
    return [line for line in script.read_text().splitlines() if "SPEC_SHA256" not in line and "sha256" not in line]
