"""The user's own Keras objects (`type: "module:Name"`) in a spec: accepted wherever a Keras class
is, refused in located lines where tfgen cannot build them, never imported by `validate` or
`build`, and bound in the script by `rt.function` inside the function that uses them."""

from __future__ import annotations

import ast
import re

import yaml
from conftest import base_spec, tfgen_here, write_module

MARKED = """from pathlib import Path

Path(__file__).with_name("imported").write_text("imported")
"""


def _everywhere() -> dict:
    """A spec naming its own object in every place that takes a Keras class."""
    spec = base_spec(
        losses={"label": {"type": "mine:FocalLoss", "gamma": 2.0}},
        metrics={"label": ["mine:F1Score", {"type": "mine:Hits", "name": "hits"}]},
        optimizer={"type": "Adam", "learning_rate": {"type": "mine:Halving", "rate": 0.01}},
    )
    spec["data"]["train"]["preprocess"] = [{"type": "mine:Clip", "limit": 3.0}]
    spec["data"]["train"]["augment"] = ["mine:Jitter"]
    spec["model"]["branches"] = {"features": [{"type": "mine:Scale", "factor": 2.0}]}
    spec["model"]["layers"] = [
        {
            "type": "Dense",
            "units": 8,
            "kernel_regularizer": {"type": "mine:SmallL2", "l2": 0.01},
            "kernel_initializer": {"type": "mine:Halves"},
            "kernel_constraint": {"type": "mine:Bounded", "limit": 1.0},
        },
        {"residual": [{"type": "mine:Scale", "factor": 0.5, "gain_initializer": {"type": "HeNormal"}}]},
    ]
    spec["model"]["outputs"] = {"label": [{"type": "mine:Head", "units": 3}]}
    return spec


def _write(tmp_path, spec: dict) -> str:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return "s.yaml"


def test_own_objects_are_accepted_everywhere_and_validate_and_build_never_import_them(tmp_path):
    write_module(tmp_path, "mine", MARKED)
    spec = _write(tmp_path, _everywhere())
    for command in (["validate", spec], ["build", spec, "--out", "generated"], ["check", spec, "--out", "generated"]):
        result = tfgen_here(*command, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    assert not (tmp_path / "imported").exists()
    lint = tfgen_here("lint", "generated", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def _functions(tmp_path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((tmp_path / "generated" / "s.py").read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _bound(function: ast.FunctionDef) -> list[str]:
    """`name <- reference` for each `name = rt.function(reference, SPEC_DIR, place)` (or
    `rt.own_object(reference, SPEC_DIR, place, places)`) of the function."""
    found = []
    for node in function.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = ast.unparse(node.value.func)
            if call in ("rt.function", "rt.own_object"):
                found.append(f"{node.targets[0].id} <- {node.value.args[0].value}")
    return found


def test_each_function_binds_the_objects_it_builds_and_nothing_is_imported_at_the_top(tmp_path):
    spec = _write(tmp_path, _everywhere())
    assert tfgen_here("build", spec, "--out", "generated", cwd=tmp_path).returncode == 0
    functions = _functions(tmp_path)
    assert _bound(functions["build_model"]) == [
        "Scale <- mine:Scale",
        "SmallL2 <- mine:SmallL2",
        "Halves <- mine:Halves",
        "Bounded <- mine:Bounded",
        "Head <- mine:Head",
    ]
    assert _bound(functions["build_preprocessing"]) == ["Clip <- mine:Clip"]
    assert _bound(functions["build_augmentation"]) == ["Jitter <- mine:Jitter"]
    assert _bound(functions["build_losses"]) == ["FocalLoss <- mine:FocalLoss"]
    assert _bound(functions["build_metrics"]) == ["F1Score <- mine:F1Score", "Hits <- mine:Hits"]
    assert _bound(functions["build_optimizer"]) == ["Halving <- mine:Halving"]
    text = (tmp_path / "generated" / "s.py").read_text()
    assert 'rt.per_example_loss(FocalLoss, {"gamma": 2.0})' in text
    assert "gain_initializer=keras.initializers.HeNormal()" in text
    assert '"f1_score": F1Score()' in text  # the history key: the class's name in snake case
    assert "mine" not in "".join(ast.unparse(n) for n in ast.parse(text).body if isinstance(n, ast.Import))
    first = text
    assert tfgen_here("build", spec, "--out", "generated", cwd=tmp_path).returncode == 0
    assert (tmp_path / "generated" / "s.py").read_text() == first


def test_a_name_the_function_uses_is_bound_under_another(tmp_path):
    spec = base_spec(losses={"label": "mine:x"})
    assert tfgen_here("build", _write(tmp_path, spec), "--out", "generated", cwd=tmp_path).returncode == 0
    assert _bound(_functions(tmp_path)["build_losses"]) == ["custom_x <- mine:x"]


def test_without_own_objects_the_losses_stay_a_constant(tmp_path):
    assert tfgen_here("build", _write(tmp_path, base_spec()), "--out", "generated", cwd=tmp_path).returncode == 0
    text = (tmp_path / "generated" / "s.py").read_text()
    assert "LOSSES = {" in text and "functools" not in text and "rt.function" not in text


def _errors(tmp_path, spec: dict) -> list[str]:
    result = tfgen_here("validate", _write(tmp_path, spec), cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    lines = result.stderr.splitlines()
    assert all(re.match(r"s\.yaml:\d+:\d+: ", line) for line in lines), lines
    return [line.split(": ", 1)[1] for line in lines]  # field: message


def test_what_tfgen_cannot_build_is_refused_in_located_lines(tmp_path):
    spec = base_spec(
        losses={"label": {"type": "mine:FocalLoss", "reduction": "sum"}},
        metrics={"label": ["my-metrics:Hits"]},
        optimizer={"type": "mine:Fast", "learning_rate": 0.1},
    )
    spec["model"]["layers"] = [
        {"type": "Dense", "units": 8, "kernel_initializer": "mine:Halves"},
        {"type": "mine:Scale", "inner": {"type": "other:Gate"}},
        {"type": "other:Scale"},
    ]
    assert _errors(tmp_path, spec) == [
        (
            "model.layers.0.kernel_initializer: Dense expects an initializer (a name or `{type: ...}`) "
            'or null, got "mine:Halves"; your own class is written `{type: "mine:Halves"}`'
        ),
        (
            "model.layers.1.inner.type: `other:Gate` under `inner` of `mine:Scale`: tfgen builds a nested "
            "object only under an argument ending in `_regularizer`, `_initializer`, `_constraint` or `learning_rate`, "
            "or of a Keras class of one kind"
        ),
        (
            "model.layers.2.type: `other:Scale` and `mine:Scale` have the same name: the script binds "
            "each by its name, so give one another name (or import it under one in a module of yours)"
        ),
        (
            "losses.label.reduction: tfgen builds losses with `reduction=None` and averages them over the "
            "global batch; remove `reduction`"
        ),
        (
            "metrics.label.0: expected a Keras class name or `package.module:Name` (your own class), "
            "found `my-metrics:Hits`"
        ),
        (
            "optimizer.type: `mine:Fast`: the optimizer is a Keras class (your own layers, losses, "
            "metrics, schedules, ... work)"
        ),
    ]
