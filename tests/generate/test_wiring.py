"""The model's wiring is planned once (tfgen/generate/wiring.py): the script's `build_model` lines
are its steps rendered, and `validate --deep` walks the same steps with Keras objects, locating a
failure at the step's spec field. These tests hold the steps to the spec and to the script."""

from __future__ import annotations

import pytest
import yaml
from conftest import SPECS, base_spec

from tfgen.generate.wiring import Role, model_wiring
from tfgen.spec.load import load_spec
from tfgen.spec.names import output_names


def _node(document, loc):
    for key in loc:
        document = document[key]
    return document


def _wiring(path):
    spec = load_spec(path).spec
    return model_wiring(spec, output_names(spec))


def _layer_steps(wiring):
    yield from (step for group in wiring.pipeline.values() for step in group)
    yield from (step for step in wiring.steps() if step.role in (Role.LAYER, Role.ADD))


@pytest.mark.parametrize(
    "path", [p for p in SPECS if p.stem not in ("gan", "custom_step")], ids=lambda p: p.stem
)  # gan, custom_step: networks
def test_each_layer_step_is_located_at_the_spec_item_it_builds(path):
    document, wiring = yaml.safe_load(path.read_text()), _wiring(path)
    for step in _layer_steps(wiring):
        *parent, index = step.loc
        if index == len(_node(document, parent)):
            continue  # the float32 activation tfgen adds to a head under mixed precision
        node = _node(document, step.loc)
        if step.role is Role.ADD:
            assert set(node) == {"residual"}, step
        elif isinstance(node, dict) and "type" in node:
            assert node["type"] == step.item.type, step
        else:  # an application backbone, or its preprocessing
            assert {"application", "application_preprocess"} & set(node), step


def test_branches_merge_and_residual_blocks_are_wired_in_the_scripts_order(tmp_path):
    spec = base_spec()
    spec["model"] = {
        "inputs": {"a": {"shape": [8]}, "b": {"shape": [8]}},
        "branches": {
            "b": [{"residual": [{"type": "Dense", "units": 8}, {"residual": [{"type": "Dense", "units": 8}]}]}]
        },
        "layers": [{"type": "Dense", "units": 4}],
        "outputs": {"label": [{"type": "Dense", "units": 3}]},
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    wiring = _wiring(tmp_path / "s.yaml")
    lines = [(step.role, step.target, step.source, step.loc) for step in wiring.steps()]
    branch = ("model", "branches", "b", 0)
    assert lines == [
        (Role.ALIAS, "shortcut", "inputs['b']", branch),
        (Role.LAYER, "branch", "inputs['b']", (*branch, "residual", 0)),
        (Role.ALIAS, "shortcut_2", "branch", (*branch, "residual", 1)),
        (Role.LAYER, "branch", "branch", (*branch, "residual", 1, "residual", 0)),
        (Role.ADD, "branch", "branch", (*branch, "residual", 1)),
        (Role.ADD, "branches['b']", "branch", branch),
        (Role.MERGE, "x", "[inputs['a'], branches['b']]", ("model", "merge")),
        (Role.LAYER, "x", "x", ("model", "layers", 0)),
        (Role.LAYER, "outputs['label']", "x", ("model", "outputs", "label", 0)),
    ]
    assert [step.shortcut for step in wiring.steps() if step.role is Role.ADD] == ["shortcut_2", "shortcut"]
