"""The runtime's predictions module, called directly: probabilities from logits or not, a
row's likeliest classes, the files written whole, the run's class names, and the one line a
run folder without a single model gives."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tfgen_runtime import Field, UserError, named_targets, trained_model
from tfgen_runtime.predictions import prediction_row, probabilities, rows_text, write_whole

TARGETS = {"digit": Field((), "int32", classes=3), "price": Field((), "float32")}


def test_logits_become_a_softmax_and_one_unit_a_sigmoid():
    assert probabilities([0.0, 0.0, np.log(2.0)], True) == pytest.approx([0.25, 0.25, 0.5])
    assert probabilities([0.2, 0.3, 0.5], False) == pytest.approx([0.2, 0.3, 0.5])
    assert probabilities([0.0], True) == pytest.approx([0.5, 0.5])
    assert probabilities([0.9], False) == pytest.approx([0.1, 0.9])


def test_a_row_holds_the_top_k_class_names_with_their_probabilities_and_each_value():
    targets = {**TARGETS, "digit": TARGETS["digit"]._replace(names=("a", "b", "c"))}
    outputs = {"digit": np.array([0.1, 0.7, 0.2]), "price": np.array([3.5])}
    row = prediction_row(7, outputs, targets, logits=(), top_k=2)
    assert row == {
        "id": 7,
        "digit": "b",
        "digit_probability": 0.7,
        "digit_2": "c",
        "digit_2_probability": 0.2,
        "price": 3.5,
    }
    unnamed = prediction_row("x.png", outputs, TARGETS, logits=(), top_k=1)
    assert unnamed["digit"] == "1"


def test_rows_are_csv_or_json_lines():
    rows = [{"id": 1, "v": [1.0, 2.0]}, {"id": 2, "v": [3.0, 4.0]}]
    assert rows_text(rows, json_lines=False) == 'id,v\n1,"[1.0, 2.0]"\n2,"[3.0, 4.0]"\n'
    assert [json.loads(line) for line in rows_text(rows, json_lines=True).splitlines()] == rows


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_whole(tmp_path / "out.csv", object())
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UserError, match="no such folder"):
        write_whole(tmp_path / "missing" / "out.csv", "x")


def test_class_names_come_from_the_spec_else_the_runs_record(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"class_names": {"digit": ["x", "y", "z"]}}))
    assert named_targets(TARGETS, tmp_path)["digit"].names == ("x", "y", "z")
    listed = {"digit": TARGETS["digit"]._replace(names=("a", "b", "c"))}
    assert named_targets(listed, tmp_path)["digit"].names == ("a", "b", "c")
    assert named_targets(TARGETS, tmp_path / "none")["price"].names is None


def test_a_run_folder_without_one_model_is_one_line_naming_its_networks(tmp_path):
    with pytest.raises(UserError, match="no trained model"):
        trained_model(tmp_path)
    (tmp_path / "generator.keras").write_bytes(b"")
    with pytest.raises(UserError, match=r"no single model to predict with; its networks: generator\.keras"):
        trained_model(tmp_path)
    with pytest.raises(UserError, match="no such run folder"):
        trained_model(tmp_path / "missing")
