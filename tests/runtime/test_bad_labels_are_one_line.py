"""A class target's labels keep one rule on every source (arrays, CSV rows, TFRecord records,
streamed datasets): one label per example (shape `[]` or `[1]`) is a class id in [0, classes),
and a float target of two classes takes labels in [0, 1] (0, 1 or a soft label, as
BinaryCrossentropy reads them). A label that breaks it, a NaN label and a complex input are
one line naming the file and the row or record, before the first step."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import Lazy, base_spec, lazy_import, load_runtime

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def one_error_line(script, tmp_path) -> str:
    """The one `error:` line of the script's run in tmp_path (asserting it is one, no traceback)."""
    command = [sys.executable, str(script), "--output-dir", str(tmp_path / "run")]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.stderr
    assert not (tmp_path / "run" / "history.jsonl").exists()
    return lines[0]


def test_labels_3_minus_1_and_7_on_a_float_binary_target_are_refused_naming_a_row():
    binary = {"label": rt.Field((), "float32", classes=2)}
    labels = np.array([0.0, 1.0, 3.0, 1.0, -1.0, 7.0], "float32")
    with pytest.raises(rt.UserError, match=r"targets\.label: 3 labels outside \[0, 1\] .*, e\.g\. 3\.0 at row 2$"):
        rt.checked_arrays({"label": labels}, binary, "target")
    soft = np.array([0.0, 0.25, 1.0, 0.9], "float32")  # soft labels, as BinaryCrossentropy reads them
    assert rt.checked_arrays({"label": soft}, binary, "target")["label"].tolist() == soft.tolist()


def test_labels_of_a_shape_1_class_target_are_range_checked():
    column = {"label": rt.Field((1,), "int32", classes=3)}
    with pytest.raises(rt.UserError, match=r"targets\.label: 1 labels outside \[0, 3\), e\.g\. 5 at row 2$"):
        rt.checked_arrays({"label": np.array([[0], [2], [5], [1]])}, column, "target")
    floats = {"label": rt.Field((1,), "float32", classes=3)}  # float ids: whole numbers below 3
    with pytest.raises(rt.UserError, match=r"1 labels outside \[0, 3\), e\.g\. 1\.5 at row 1$"):
        rt.checked_arrays({"label": np.array([[0.0], [1.5]])}, floats, "target")
    assert rt.checked_arrays({"label": np.zeros((0, 1))}, column, "target")["label"].shape == (0, 1)


def test_complex_inputs_are_refused_instead_of_losing_their_imaginary_part():
    x = np.ones((4, 2), "complex64")
    x[2, 1] = 1 + 2j
    with pytest.raises(rt.UserError) as raised:
        rt.checked_arrays({"x": x}, {"x": rt.Field((2,), "float32")}, "input")
    assert str(raised.value) == (
        "inputs.x: complex values (complex64, e.g. 1+2j at row 2); the spec declares float32: "
        "give its real part (or its parts as two inputs)"
    )


def test_streamed_labels_of_a_binary_target_stop_in_the_graph_naming_the_target():
    labels = np.array([0.0, 1.0, 0.5, 3.0], "float32")
    data = tf.data.Dataset.from_tensor_slices((np.zeros((4, 2), "float32"), labels))
    named = rt.named_examples(data, {"x": rt.Field((2,), "float32")}, {"y": rt.Field((), "float32", classes=2)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"targets\.y: labels outside \[0, 1\]"):
        list(named.as_numpy_iterator())


def write_records(path, labels, features=None):
    """A TFRecord file of one example per label (int or float), each with 4 features."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index, label in enumerate(labels):
            kind = "float_list" if isinstance(label, float) else "int64_list"
            value = tf.train.FloatList(value=[label]) if kind == "float_list" else tf.train.Int64List(value=[label])
            row = features[index] if features is not None else [0.5] * 4
            feature = {
                "features": tf.train.Feature(float_list=tf.train.FloatList(value=row)),
                "label": tf.train.Feature(**{kind: value}),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def parse_as(dtype):
    described = {"features": tf.io.FixedLenFeature([4], tf.float32), "label": tf.io.FixedLenFeature([], dtype)}

    def parse(records):
        examples = tf.io.parse_example(records, described)
        return {"features": examples["features"]}, {"label": examples["label"]}

    return parse


@pytest.mark.parametrize(
    ("labels", "dtype", "field", "expected"),
    [
        ([0, 1, 2, 1, 7, 0], tf.int64, ((), "int64", 3), "record 4: targets.label: label 7 is outside [0, 3)"),
        ([0.0, 1.0, float("nan")], tf.float32, ((), "float32", 2), "record 2: targets.label: a non-finite value"),
        (
            [0.0, 1.0, 1.0, -1.0],
            tf.float32,
            ((1,), "float32", 2),
            "record 3: targets.label: label -1.0 is outside [0, 1]",
        ),
    ],
    ids=["out-of-range", "nan", "binary"],
)
def test_a_tfrecord_label_out_of_range_or_nan_names_the_file_and_the_record(tmp_path, labels, dtype, field, expected):
    path = tmp_path / "a.tfrecord"
    write_records(path, labels)
    inputs = {"features": rt.Field((4,), "float32")}
    targets = {"label": rt.Field(*field)}
    with pytest.raises(rt.UserError) as raised:
        rt.checked_tfrecords([str(path)], "", parse_as(dtype), inputs, targets)
    assert str(raised.value).startswith(f"{path}: {expected}"), raised.value


def test_a_nan_tfrecord_feature_names_the_file_and_the_record(tmp_path):
    path = tmp_path / "a.tfrecord"
    rows = [[0.5] * 4 for _ in range(300)]
    rows[290][1] = float("nan")  # in the second batch of 256 records
    write_records(path, [0] * 300, rows)
    fields = {"features": rt.Field((4,), "float32")}, {"label": rt.Field((), "int64", classes=3)}
    with pytest.raises(rt.UserError, match=r"a\.tfrecord: record 290: inputs\.features: a non-finite value"):
        rt.checked_tfrecords([str(path)], "", parse_as(tf.int64), *fields)


def npz_spec(target, loss, units=3):
    data = {"train": {"source": {"type": "npz", "path": "data.npz", "x": "x", "y": "y"}, "batch_size": 16}}
    spec = base_spec(data={**data, "validation_split": 0.25}, targets={"label": target}, losses={"label": loss})
    spec["model"]["outputs"] = {"label": [{"type": "Dense", "units": units}]}
    spec["model"]["inputs"]["features"]["shape"] = [4]
    spec["metrics"] = {}
    return spec


@pytest.mark.slow
def test_a_float_binary_target_with_labels_3_minus_1_and_7_is_refused_before_class_weights_count_them(
    build_spec, tmp_path
):
    loss = {"type": "BinaryCrossentropy", "from_logits": True, "class_weight": "balanced"}
    script = build_spec(npz_spec({"shape": [], "dtype": "float32", "classes": 2}, loss, units=1))
    y = np.zeros(64, "float32")
    y[[3, 5, 7]] = [3, -1, 7]
    np.savez(tmp_path / "data.npz", x=np.zeros((64, 4), "float32"), y=y)
    line = one_error_line(script, tmp_path)
    assert line.startswith("error: data.npz: targets.label: 3 labels outside [0, 1]"), line
    assert line.endswith("e.g. 3.0 at row 3"), line


@pytest.mark.slow
def test_a_shape_1_class_target_of_an_npz_file_is_range_checked(build_spec, tmp_path):
    loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
    script = build_spec(npz_spec({"shape": [1], "dtype": "int32", "classes": 3}, loss))
    y = np.zeros((64, 1), "int32")
    y[9] = 5
    np.savez(tmp_path / "data.npz", x=np.zeros((64, 4), "float32"), y=y)
    assert (
        one_error_line(script, tmp_path) == "error: data.npz: targets.label: 1 labels outside [0, 3), e.g. 5 at row 9"
    )


@pytest.mark.slow
def test_complex_npz_inputs_are_one_line(build_spec, tmp_path):
    loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
    script = build_spec(npz_spec({"shape": [], "dtype": "int32", "classes": 3}, loss))
    np.savez(tmp_path / "data.npz", x=np.full((64, 4), 1 + 1j, "complex64"), y=np.zeros(64, "int32"))
    line = one_error_line(script, tmp_path)
    assert line.startswith("error: data.npz: inputs.features: complex values (complex64, e.g. 1+1j at row 0)"), line


@pytest.mark.slow
def test_a_tfrecord_label_out_of_range_stops_the_script_naming_the_file_and_record(build_spec, tmp_path):
    source = {
        "type": "tfrecord",
        "files": "data/*.tfrecord",
        "features": {"features": {"shape": [4]}, "label": {"shape": [], "dtype": "int64"}},
    }
    loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
    spec = npz_spec({"shape": [], "dtype": "int32", "classes": 3}, loss)
    spec["data"] = {"train": {"source": source, "batch_size": 8}}
    script = build_spec(spec)
    (tmp_path / "data").mkdir()
    write_records(tmp_path / "data" / "a.tfrecord", [0, 1, 2] * 10)
    write_records(tmp_path / "data" / "b.tfrecord", [0, 1, 2, 1, 7, 0])
    assert (
        one_error_line(script, tmp_path) == "error: data/b.tfrecord: record 4: targets.label: label 7 is outside [0, 3)"
    )
