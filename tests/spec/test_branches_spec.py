"""`model.branches` and `model.merge`: a layer-list model of several inputs, each through its own
layers, merged into the trunk. What validation accepts and refuses, what the planner decides and
how the generated `build_model()` reads (the errors' pinned output is in tests/spec/invalid_specs;
--deep's in tests/check/deep_invalid_specs; training in tests/e2e/test_branches.py)."""

from __future__ import annotations

import ast

import pytest
import yaml
from conftest import base_spec, build, tfgen_here

from tfgen.generate.identity import state_sha256
from tfgen.generate.plan import make_view
from tfgen.spec.models import Spec

MERGES = ("concatenate", "add", "average", "multiply")
KERAS_MERGES = {"concatenate": "Concatenate", "add": "Add", "average": "Average", "multiply": "Multiply"}


def two_inputs(merge: str | None = None, **model) -> dict:
    """`features` [3] through a Normalization branch (then 4 wide), `extra` [4] as given."""
    spec = base_spec()
    spec["model"] = {
        "inputs": {"features": {"shape": [3]}, "extra": {"shape": [4]}},
        "branches": {"features": [{"type": "Normalization", "adapt": True}, {"type": "Dense", "units": 4}]},
        **({"merge": merge} if merge else {}),
        "layers": [{"type": "Dense", "units": 16, "activation": "relu"}],
        "outputs": {"label": [{"type": "Dense", "units": 3}]},
        **model,
    }
    return spec


def build_model_lines(script) -> list[str]:
    """build_model()'s statements (as ast.unparse writes them: one line each, black's wrapping
    undone) and comments, in order; the docstring left out."""
    text = script.read_text()
    function = next(
        node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name == "build_model"
    )
    found = [(statement.lineno, ast.unparse(statement)) for statement in function.body[1:]]
    lines = text.splitlines()
    for number in range(function.body[1].lineno, function.end_lineno + 1):
        if lines[number - 1].strip().startswith("#"):
            found.append((number, lines[number - 1].strip()))
    return [line for _, line in sorted(found)]


def view(spec: dict):
    return make_view(Spec.model_validate(spec), spec_path="x.yaml", spec_sha256="0", version="0")


@pytest.mark.parametrize("merge", MERGES)
def test_each_merge_mode_builds_a_model_that_reads_branch_merge_trunk_heads(tmp_path, merge):
    script = build(tmp_path, two_inputs(merge), stem=f"joined_{merge}")
    assert build_model_lines(script) == [
        "inputs = {k: keras.Input(f.shape, dtype=f.dtype, name=k) for k, f in INPUTS.items()}",
        "branches = {}",
        "# The `features` branch",
        "branch = keras.layers.Normalization(name='adapted_normalization')(inputs['features'])",
        "branches['features'] = keras.layers.Dense(units=4)(branch)",
        f"# The branches' outputs and `extra` as given, {MERGE_WORDS[merge]}",
        f"x = keras.layers.{KERAS_MERGES[merge]}()([branches['features'], inputs['extra']])",
        "x = keras.layers.Dense(units=16, activation='relu')(x)",
        "outputs = {}",
        "outputs['label'] = keras.layers.Dense(units=3)(x)",
        "return keras.Model(inputs=inputs, outputs=outputs, name='small')",
    ]


MERGE_WORDS = {
    "concatenate": "concatenated on the last axis",
    "add": "added",
    "average": "averaged",
    "multiply": "multiplied",
}


def test_several_inputs_without_branches_are_merged_as_given(tmp_path):
    spec = two_inputs()
    del spec["model"]["branches"]
    script = build(tmp_path, spec)
    lines = build_model_lines(script)
    assert "branches = {}" not in lines
    assert lines[1:3] == [
        "# The inputs as given, concatenated on the last axis",
        "x = keras.layers.Concatenate()([inputs['features'], inputs['extra']])",
    ]
    docstring = ast.get_docstring(ast.parse(script.read_text()))
    assert "Model: 2 inputs merged by concatenate, then 1 shared layers;" in docstring


def test_one_input_with_a_branch_needs_no_merge(tmp_path):
    spec = two_inputs()
    del spec["model"]["inputs"]["extra"]
    lines = build_model_lines(build(tmp_path, spec))
    assert not any("Concatenate" in line for line in lines)
    assert lines[5] == "x = branches['features']"


def test_branches_are_planned_in_the_inputs_order_and_adapted_before_the_trunk():
    spec = two_inputs()
    spec["model"]["inputs"]["side"] = {"shape": [4]}
    # Written side first: the model applies them in the inputs' order all the same.
    spec["model"]["branches"] = {
        "side": [{"type": "Normalization", "adapt": {"batches": 2}}],
        **spec["model"]["branches"],
    }
    spec["model"]["layers"] = [{"type": "Normalization", "adapt": True}]
    planned = view(spec).model
    assert [branch.input for branch in planned.branches] == ["features", "side"]
    # In the order they are adapted: each after the adapted layers before it.
    assert list(planned.adapted.items()) == [
        ("adapted_normalization", 64),
        ("adapted_normalization_2", 2),
        ("adapted_normalization_3", 64),
    ]
    assert planned.branches[1].lines[0].code == "keras.layers.Normalization(name='adapted_normalization_2')"
    assert planned.start.source == "[branches['features'], inputs['extra'], branches['side']]"


def test_a_model_without_branches_keeps_its_state_hash_and_a_changed_branch_changes_it():
    """STATE_SHA256 (what a resume must match) hashes the model's dump: without branches, the
    dump is what it was before branches existed; with them, a changed branch refuses a resume."""
    one_input = Spec.model_validate(base_spec()).model.model_dump(mode="json")
    assert "branches" not in one_input and "merge" not in one_input
    default, written = two_inputs(), two_inputs("concatenate")
    assert state_sha256(Spec.model_validate(default)) == state_sha256(Spec.model_validate(written))
    changed = two_inputs()
    changed["model"]["branches"]["features"][1]["units"] = 5
    assert state_sha256(Spec.model_validate(changed)) != state_sha256(Spec.model_validate(default))
    assert state_sha256(Spec.model_validate(two_inputs("add"))) != state_sha256(Spec.model_validate(default))


def test_preprocessing_layers_of_a_model_of_several_inputs_are_a_located_error(tmp_path):
    spec = two_inputs()
    spec["data"]["train"]["preprocess"] = [{"type": "Rescaling", "scale": 0.5}]
    path = tmp_path / "several.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "several.yaml:11:5: data.train.preprocess: `preprocess` layers apply to a single input; this model has several"
    ]


def test_branch_layers_are_checked_against_the_keras_catalog(tmp_path):
    spec = two_inputs()
    spec["model"]["branches"]["features"][1] = {"type": "Dense", "unit": 4}
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "model.branches.features.1.unit: `Dense` has no argument `unit`; did you mean `units`?" in result.stderr
