"""Bad data never trains, and never as a traceback: NaN or infinite features, TFRecord files
that are truncated, corrupt, or differ from their feature description, npz files that are not
npz files, and a validation part with no examples are each one line before the first step."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import Lazy, base_spec, lazy_import, load_runtime

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def parse(records):
    description = {"features": tf.io.FixedLenFeature([8], tf.float32), "label": tf.io.FixedLenFeature([], tf.int64)}
    return tf.io.parse_example(records, description)


def run(script, tmp_path, *args):
    command = [sys.executable, str(script), "--epochs", "1", "--output-dir", str(tmp_path / "run"), *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "-1"},
        check=False,
    )


def one_error_line(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def write_records(path, n=64, label_float=False, width=8):
    rng = np.random.default_rng(0)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index in range(n):
            label = (
                tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))
                if label_float
                else tf.train.Feature(int64_list=tf.train.Int64List(value=[index % 3]))
            )
            features = tf.train.Feature(float_list=tf.train.FloatList(value=rng.random(width)))
            example = tf.train.Example(features=tf.train.Features(feature={"features": features, "label": label}))
            writer.write(example.SerializeToString())


def tfrecord_script(build_spec, tmp_path):
    source = {
        "type": "tfrecord",
        "files": "data/*.tfrecord",
        "features": {"features": {"shape": [8]}, "label": {"shape": [], "dtype": "int64"}},
    }
    spec = base_spec(data={"train": {"source": source, "batch_size": 16}, "validation": {"source": source}})
    (tmp_path / "data").mkdir()
    return build_spec(spec)


def test_a_truncated_tfrecord_file_is_named_instead_of_training_on_part_of_it(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_records(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 + 10])  # a copy cut off inside a record
    with pytest.raises(rt.UserError, match=r"a.tfrecord: truncated or damaged: 32 whole records, then 10 bytes"):
        rt.checked_tfrecords([str(path)], "", parse)


def test_a_flipped_byte_and_a_garbage_file_are_one_line_each(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_records(path)
    flipped = bytearray(path.read_bytes())
    flipped[500] ^= 0xFF
    path.write_bytes(bytes(flipped))
    with pytest.raises(rt.UserError, match=r"a.tfrecord: corrupted record at byte \d+ \(not a TFRecord file"):
        rt.checked_tfrecords([str(path)], "", parse)
    path.write_bytes(os.urandom(300))
    with pytest.raises(rt.UserError, match=r"a.tfrecord: corrupted record at byte 0 \(not a TFRecord file"):
        rt.checked_tfrecords([str(path)], "", parse)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("missing", "record 3: no feature `label` (int64) in it"),
        ("length", "record 0: feature `features`: Number of float values != expected"),
        ("float_label", "record 0: feature `label`: Data types don't match"),
    ],
)
def test_records_unlike_their_description_name_the_record_and_the_feature(tmp_path, kind, expected):
    path = tmp_path / "a.tfrecord"
    if kind == "missing":  # records 0-2 are whole, record 3 lacks its label
        write_records(path, n=3)
        good = path.read_bytes()
        with tf.io.TFRecordWriter(str(path)) as writer:
            feature = tf.train.Feature(float_list=tf.train.FloatList(value=[0.0] * 8))
            writer.write(
                tf.train.Example(features=tf.train.Features(feature={"features": feature})).SerializeToString()
            )
        path.write_bytes(good + path.read_bytes())
    else:
        write_records(path, width=5 if kind == "length" else 8, label_float=kind == "float_label")
    with pytest.raises(rt.UserError) as raised:
        rt.checked_tfrecords([str(path)], "", parse)
    assert str(raised.value).startswith(f"{path}: {expected}"), raised.value


@pytest.mark.slow
def test_the_example_count_is_printed_at_start(build_spec, tmp_path):
    script = tfrecord_script(build_spec, tmp_path)
    write_records(tmp_path / "data" / "a.tfrecord", n=64)
    result = run(script, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "64 examples in 1 TFRecord file(s)" in result.stdout


def npz_script(build_spec, tmp_path, validation_split=None):
    data = {"train": {"source": {"type": "npz", "path": "data.npz", "x": "x", "y": "y"}, "batch_size": 16}}
    data |= (
        {"validation_split": validation_split}
        if validation_split
        else {"validation": base_spec()["data"]["validation"]}
    )
    return build_spec(base_spec(data=data))


@pytest.mark.slow
@pytest.mark.parametrize("content", [b"", b"x,y\n1,2\n"], ids=["empty", "text"])
def test_a_file_that_is_not_an_npz_says_so(build_spec, tmp_path, content):
    script = npz_script(build_spec, tmp_path)
    (tmp_path / "data.npz").write_bytes(content)
    assert (
        one_error_line(run(script, tmp_path)) == "error: data.npz: not an .npz file (an .npz is a zip of .npy arrays)"
    )


@pytest.mark.slow
def test_nan_in_a_validation_feature_is_refused_before_training(build_spec, tmp_path):
    script = npz_script(build_spec, tmp_path, validation_split=0.25)
    x = np.random.default_rng(0).random((64, 8)).astype("float32")
    x[60, 3] = np.nan
    np.savez(tmp_path / "data.npz", x=x, y=np.zeros(64, "int32"))
    line = one_error_line(run(script, tmp_path))
    assert line.startswith("error: data.npz: inputs.features: 1 non-finite values (NaN or inf), e.g. nan at row 60")
    assert not (tmp_path / "run" / "checkpoints").exists()


@pytest.mark.slow
def test_a_validation_split_that_holds_out_nothing_is_refused_before_training(build_spec, tmp_path):
    script = npz_script(build_spec, tmp_path, validation_split=0.01)
    np.savez(tmp_path / "data.npz", x=np.zeros((40, 8), "float32"), y=np.zeros(40, "int32"))
    assert (
        one_error_line(run(script, tmp_path))
        == "error: `validation_split` 0.01 of 40 examples holds out none: raise it"
    )
    assert not (tmp_path / "run" / "history.jsonl").exists()


@pytest.mark.slow
def test_nan_in_a_streamed_feature_stops_with_one_line(build_spec, tmp_path):
    script = tfrecord_script(build_spec, tmp_path)
    path = tmp_path / "data" / "a.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index in range(64):
            values = [float("nan") if index == 5 else 0.5] * 8
            feature = tf.train.Feature(float_list=tf.train.FloatList(value=values))
            label = tf.train.Feature(int64_list=tf.train.Int64List(value=[0]))
            example = tf.train.Example(features=tf.train.Features(feature={"features": feature, "label": label}))
            writer.write(example.SerializeToString())
    # Found as the records are checked before training: the file and the record are named.
    line = "error: data/a.tfrecord: record 5: inputs.features: a non-finite value (NaN or inf)"
    assert one_error_line(run(script, tmp_path)) == line
