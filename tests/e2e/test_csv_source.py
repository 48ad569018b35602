"""A `csv` source: a CSV file with a header, read into memory or streamed from disk, every row
checked before training (a bad one is one line naming the file, the row and the column)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import load_runtime, read_history

pytestmark = pytest.mark.slow

HEADER = "sqft,bedrooms,age,city,price"
TIMINGS = ("epoch_seconds", "examples_per_second", "input_wait")
# Kills the script right after its first checkpoint inside an epoch (a mid-epoch resume).
KILL_AFTER_FIRST_SAVE_IN_EPOCH = """
import importlib.util, os, sys
script = sys.argv[1]
sys.path.insert(0, os.path.dirname(script))
import tfgen_runtime as rt
original = rt.RunCheckpoint.save_in_epoch

def save_then_die(self, *args, **kwargs):
    original(self, *args, **kwargs)
    os._exit(9)

rt.RunCheckpoint.save_in_epoch = save_then_die
spec = importlib.util.spec_from_file_location("script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(sys.argv[2:])
"""


def write_houses(path, rows, seed=0):
    """A CSV of `rows` houses: three numeric columns, a string one, and the price."""
    rng = np.random.default_rng(seed)
    lines = [HEADER]
    for _ in range(rows):
        sqft, bedrooms, age = rng.uniform(50, 250), int(rng.integers(1, 6)), rng.uniform(0, 80)
        city = ["paris", "lyon", "nice"][int(rng.integers(0, 3))]
        price = 0.01 * sqft + 0.3 * bedrooms - 0.01 * age + rng.normal(0, 0.1)
        lines.append(f"{sqft:.2f},{bedrooms},{age:.1f},{city},{price:.4f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def regression_spec(train, validation, **pipeline):
    source = {"type": "csv", "path": str(train), "x": ["sqft", "bedrooms", "age"], "y": "price"}
    return {
        "name": "houses",
        "seed": 3,
        "deterministic": True,
        "data": {
            "train": {"source": source, "batch_size": 32, **pipeline},
            "validation": {"source": {**source, "path": str(validation)}},
        },
        "model": {
            "inputs": {"features": {"shape": [3]}},
            "layers": [{"type": "Rescaling", "scale": 0.01}, {"type": "Dense", "units": 16, "activation": "relu"}],
            "outputs": {"price": [{"type": "Dense", "units": 1}]},
        },
        "targets": {"price": {"shape": [1]}},
        "losses": {"price": "MeanSquaredError"},
        "metrics": {"price": ["MeanAbsoluteError"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 3},
    }


def run(script, *args):
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def without_timings(rows):
    return [{key: value for key, value in row.items() if key not in TIMINGS} for row in rows]


def test_a_regression_trains_to_the_same_history_read_into_memory_and_streamed(build_spec, tmp_path):
    train = write_houses(tmp_path / "train.csv", 320)
    validation = write_houses(tmp_path / "validation.csv", 64, seed=1)
    histories = {}
    for in_memory in (True, False):
        stem = f"houses_{str(in_memory).lower()}"
        script = build_spec(regression_spec(train, validation, in_memory=in_memory), stem=stem)
        result = run(script, "--output-dir", str(tmp_path / stem))
        assert result.returncode == 0, result.stderr[-3000:]
        streamed = f"320 rows in {train} (streamed)" in result.stdout
        assert streamed is not in_memory, result.stdout
        histories[in_memory] = without_timings(read_history(tmp_path / stem))
    assert [row["epoch"] for row in histories[True]] == [1, 2, 3]
    assert histories[True][-1]["val_loss"] < histories[True][0]["val_loss"]
    # Unshuffled, the same rows make the same batches: the runs are the same to the bit.
    assert histories[True] == histories[False]


def test_a_streamed_file_killed_mid_epoch_resumes_to_the_uninterrupted_history(build_spec, tmp_path):
    train = write_houses(tmp_path / "train.csv", 640)
    validation = write_houses(tmp_path / "validation.csv", 64, seed=1)
    spec = regression_spec(train, validation, in_memory=False, shuffle=256)
    spec["data"]["validation_split"] = 0.2  # held out of the stream by row
    del spec["data"]["validation"]
    spec["checkpoint"] = {"every_steps": 5, "keep": 3}
    script = build_spec(spec)
    straight = run(script, "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    killed = [sys.executable, "-c", KILL_AFTER_FIRST_SAVE_IN_EPOCH, str(script), "--output-dir", str(tmp_path / "k")]
    first = subprocess.run(killed, capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 9, first.stderr[-3000:]
    assert not (tmp_path / "k" / "history.jsonl").exists(), "killed after the first epoch: no mid-epoch resume"
    rerun = run(script, "--output-dir", str(tmp_path / "k"))
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "Resuming from" in rerun.stdout and "(epoch 1, step 5)" in rerun.stdout, rerun.stdout
    expected = without_timings(read_history(tmp_path / "straight"))
    assert [row["epoch"] for row in expected] == [1, 2, 3]
    assert without_timings(read_history(tmp_path / "k")) == expected


@pytest.fixture(scope="module")
def rt():
    """The support package as committed (the csv reader runs without a script)."""
    return load_runtime()


def fields(rt):
    inputs = {"features": rt.Field((3,), "float32"), "rooms": rt.Field((), "int32")}
    targets = {"price": rt.Field((1,), "float32")}
    return inputs, targets


def read(rt, path, stream, **options):
    inputs, targets = fields(rt)
    mapping = {"x": {"features": ["sqft", "age", "price"], "rooms": "bedrooms"}, "y": {"price": "price"}}
    return rt.read_csv(str(path), inputs, targets, stream=stream, **mapping, **options)


def with_row(tmp_path, row, header=HEADER):
    """houses.csv: the header, three good rows, then `row` (row 5 of the file)."""
    good = ["120.5,3,12.0,paris,2.1", "80,2,40.5,lyon,1.2", "200.25,5,3.0,nice,3.9"]
    path = tmp_path / "houses.csv"
    path.write_text("\n".join([header, *good, row]) + "\n")
    return path


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
@pytest.mark.parametrize(
    ("header", "row", "message"),
    [
        (
            "area,bedrooms,age,city,price",
            "1,2,3,nice,4",
            "row 1 (the header) has no column `sqft`: it has area, bedrooms, age, city, price",
        ),
        (HEADER, "95,2,old,nice,1.5", "row 5, column `age`: 'old' is not a number"),
        (HEADER, "95,2,7,nice", "row 5: 4 fields, the header has 5 columns: no value for column `price`"),
        (HEADER, "95,2,7,nice,1.5,9", "row 5: 6 fields, the header has 5 columns: a value after the last column"),
        (HEADER, "95,2.5,7,nice,1.5", "row 5, column `bedrooms`: '2.5' is not a whole number (int32)"),
        (HEADER, "95,4000000000,7,nice,1.5", "row 5, column `bedrooms`: '4000000000' does not fit int32"),
        (HEADER, "95,2,,nice,1.5", "row 5, column `age`: an empty value"),
        (HEADER, '95,2,"7,nice,1.5', "row 5: not CSV: "),
    ],
    ids=[
        "missing-column",
        "not-a-number",
        "too-few-fields",
        "too-many-fields",
        "not-whole",
        "too-big",
        "empty",
        "quote",
    ],
)
def test_a_bad_csv_is_one_line_naming_the_file_row_and_column(rt, tmp_path, stream, header, row, message):
    path = with_row(tmp_path, row, header)
    with pytest.raises(rt.UserError) as raised:
        read(rt, path, stream)
    assert str(raised.value).startswith(f"{path}: {message}"), raised.value
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_na_values_are_nan_in_float_columns_refused_as_non_finite_and_an_error_in_integer_ones(rt, tmp_path, stream):
    path = with_row(tmp_path, "95,2,NA,nice,1.5")
    with pytest.raises(rt.UserError, match=r"row 5, column `age`: 'NA' is not a number"):
        read(rt, path, stream)
    with pytest.raises(rt.UserError, match=r"row 5, column `age`: a missing value 'NA' \(NaN\): .* must be finite"):
        read(rt, path, stream, na_values=("NA",))
    path = with_row(tmp_path, "95,NA,7,nice,1.5")
    with pytest.raises(rt.UserError, match=r"row 5, column `bedrooms`: a missing value 'NA' in a column of int32"):
        read(rt, path, stream, na_values=("NA",))


def test_columns_fill_their_fields_the_same_read_or_streamed(rt, tmp_path):
    path = with_row(tmp_path, '"95",2,7.5,"nice, by the sea",1.5')
    x, y = read(rt, path, stream=False)
    assert x["features"].dtype == np.float32 and x["features"].shape == (4, 3)
    np.testing.assert_array_equal(x["rooms"], np.array([3, 2, 5, 2], np.int32))
    np.testing.assert_allclose(x["features"][3], [95, 7.5, 1.5])
    assert y["price"].shape == (4, 1)
    streamed = list(read(rt, path, stream=True).as_numpy_iterator())
    assert len(streamed) == 4
    for row, (features, targets) in enumerate(streamed):
        np.testing.assert_array_equal(features["features"], x["features"][row])
        assert features["rooms"] == x["rooms"][row] and targets["price"] == y["price"][row]


def test_a_split_holds_out_the_same_rows_read_or_streamed_and_validation_rows_as_split_arrays(rt, tmp_path):
    path = write_houses(tmp_path / "houses.csv", 203)
    arrays = read(rt, path, stream=False)
    stream = read(rt, path, stream=True, rows=True)
    parts = rt.held_out(arrays, 7, validation=0.2, test=0.1)
    streamed = rt.held_out(stream, 7, validation=0.2, test=0.1)
    rows = [len(part[1]["price"]) for part in parts]
    assert rows == [142, 41, 20]
    for part, streamed_part in zip(parts, streamed, strict=True):
        examples = list(streamed_part.as_numpy_iterator())
        assert int(streamed_part.cardinality()) == len(examples) == len(part[1]["price"])
        streamed_rows = sorted(tuple(features["features"]) for features, _ in examples)
        assert streamed_rows == sorted(tuple(row) for row in part[0]["features"])
    train, validation = rt.split_arrays(arrays, 0.2, 7)
    alone = rt.held_out(arrays, 7, validation=0.2)
    assert alone[2] is None
    np.testing.assert_array_equal(alone[1][0]["features"], validation[0]["features"])
    np.testing.assert_array_equal(alone[0][0]["features"], train[0]["features"])
    np.testing.assert_array_equal(parts[1][0]["features"], validation[0]["features"])  # a test split leaves them
    every = sorted(tuple(row) for part in parts for row in part[0]["features"])
    assert every == sorted(tuple(row) for row in arrays[0]["features"])  # disjoint, and nothing lost


def test_a_stratified_split_of_a_streamed_file_holds_out_the_rows_of_one_read_into_memory(rt, tmp_path):
    rng = np.random.default_rng(4)
    rows = [f"w{i},{'large' if rng.random() < 0.3 else 'small'}" for i in range(101)]
    path = tmp_path / "sizes.csv"
    path.write_text("city,size\n" + "\n".join(rows) + "\n")
    arrays = rt.read_csv(str(path), *text_fields(rt), x="city", y="size", stream=False)
    stream = rt.read_csv(str(path), *text_fields(rt), x="city", y="size", stream=True, rows=True)
    for part, streamed in zip(
        rt.held_out(arrays, 3, validation=0.2, test=0.2, stratify=True),
        rt.held_out(stream, 3, validation=0.2, test=0.2, stratify=True),
        strict=True,
    ):
        cities = sorted(bytes(x["city"]) for x, _ in streamed.as_numpy_iterator())
        assert cities == sorted(bytes(city) for city in part[0]["city"])
        labels = part[1]["size"]
        large = int(np.sum(arrays[1]["size"] == 1))
        assert abs(int(np.sum(labels == 1)) - len(labels) * large / 101) <= 1  # each class in its share


def test_a_script_reading_a_ragged_file_exits_with_one_line_and_no_traceback(build_spec, tmp_path):
    path = with_row(tmp_path, "95,2,7")
    spec = regression_spec(path, path, in_memory=False)
    result = run(build_spec(spec), "--output-dir", str(tmp_path / "run"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {path}: row 5: 3 fields, the header has 5 columns: no value for column `city`"]
    assert not (tmp_path / "run" / "run.json").exists()


def test_the_run_fingerprints_the_csv_file(build_spec, tmp_path):
    train = write_houses(tmp_path / "train.csv", 64)
    script = build_spec(regression_spec(train, train))
    result = run(script, "--output-dir", str(tmp_path / "run"), "--epochs", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [entry["path"] for entry in record["data"]] == [str(train), str(train)]


def text_fields(rt):
    inputs = {"city": rt.Field((), "string")}
    targets = {"size": rt.Field((), "int32", classes=2, names=("small", "large"))}
    return inputs, targets


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_string_columns_fill_a_string_input_and_a_target_of_named_classes(rt, tmp_path, stream):
    path = tmp_path / "sizes.csv"
    path.write_text('city,size\nparis,large\n"nice, by the sea",small\nlyon,large\n')
    data = rt.read_csv(str(path), *text_fields(rt), x="city", y="size", stream=stream)
    rows = list(data.as_numpy_iterator()) if stream else list(zip(data[0]["city"], data[1]["size"], strict=True))
    if stream:
        rows = [(x["city"], y["size"]) for x, y in rows]
    assert [(bytes(city), int(label)) for city, label in rows] == [
        (b"paris", 1),
        (b"nice, by the sea", 0),
        (b"lyon", 1),
    ]
    path.write_text("city,size\nparis,large\nlyon,medium\n")
    with pytest.raises(rt.UserError) as raised:
        rt.read_csv(str(path), *text_fields(rt), x="city", y="size", stream=stream)
    assert str(raised.value) == f"{path}: row 3, column `size`: unknown label 'medium' (the classes are small, large)"
