"""A CSV file tfgen cannot read as it was checked is one line naming it, never a traceback: a
header field over Python's 128 KiB csv limit, CR-only line endings, text that is not UTF-8
(in the script and, for the header, in `validate --deep`), and a streamed file that changed
after its rows were checked (a value, its length, a label: the stream says the file changed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Lazy, lazy_import, load_runtime

from tfgen.sources.csv.deep import _header

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)

HEADER = "sqft,age,city,price"
ROWS = ["120.5,12.0,paris,2.1", "80,40.5,lyon,1.2", "200.25,3.0,nice,3.9", "95,7,nice,1.5"]


def read(path, stream=False):
    inputs = {"features": rt.Field((2,), "float32"), "city": rt.Field((), "string")}
    targets = {"price": rt.Field((1,), "float32")}
    x = {"features": ["sqft", "age"], "city": "city"}
    return rt.read_csv(str(path), inputs, targets, x=x, y="price", stream=stream)


def test_a_header_field_over_128_kib_is_one_line_in_the_script_and_in_deep_validation(tmp_path):
    path = tmp_path / "houses.csv"
    path.write_text(f"{HEADER},{'z' * 140 * 1024}\n" + "\n".join(ROWS) + "\n")
    expected = "row 1 (the header) is not CSV: field larger than field limit (131072)"
    with pytest.raises(rt.UserError) as raised:
        read(path)
    assert str(raised.value) == f"{path}: {expected}"
    assert _header(path, ",") == ([], expected)


def test_a_header_over_1_mib_is_refused_without_reading_the_whole_line(tmp_path):
    path = tmp_path / "houses.csv"
    path.write_bytes(b"a," * 2**20)  # one line of 2 MiB, no newline
    with pytest.raises(rt.UserError, match=r"houses\.csv: row 1 \(the header\) is over 1 MiB long"):
        read(path)
    assert _header(path, ",") == ([], "row 1 (the header) is over 1 MiB long: not a header")


def test_cr_only_line_endings_are_one_line_naming_the_file(tmp_path):
    path = tmp_path / "houses.csv"
    path.write_bytes("\r".join([HEADER, *ROWS]).encode() + b"\r")
    expected = "its lines end in a carriage return (CR) only: save it with LF (or CRLF) line endings"
    for stream in (False, True):
        with pytest.raises(rt.UserError) as raised:
            read(path, stream)
        assert str(raised.value) == f"{path}: {expected}"
    assert _header(path, ",") == ([], expected)
    path.write_bytes("\r\n".join([HEADER, *ROWS]).encode() + b"\r\n")  # CRLF reads
    assert read(path)[0]["city"].tolist() == [b"paris", b"lyon", b"nice", b"nice"]


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_latin_1_bytes_in_a_string_column_are_one_line_naming_the_row(tmp_path, stream):
    path = tmp_path / "houses.csv"
    path.write_bytes("\n".join([HEADER, *ROWS]).replace("lyon", "n\xeemes").encode("latin-1") + b"\n")
    with pytest.raises(rt.UserError) as raised:
        read(path, stream)
    assert str(raised.value) == f"{path}: row 3, column `city`: 'n\ufffdmes' is not UTF-8 text: save the file as UTF-8"


def test_a_streamed_file_changed_after_its_check_stops_its_stream_saying_so(tmp_path):
    path = tmp_path / "houses.csv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    data = read(path, stream=True)
    assert len(list(data.as_numpy_iterator())) == 4
    path.write_text("\n".join([HEADER, *ROWS[:3], "95,7,nice,oops"]) + "\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rows from 2: changed since it was checked"):
        list(data.as_numpy_iterator())


# Runs SCRIPT after changing its csv file right after its rows were checked (HOW: the change).
CHANGE_AFTER_CHECK = """
import os, runpy, sys
script, how = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(script))
import tfgen_runtime.csv_files as csv_files

checked_rows = csv_files.checked_rows

def checked_then_changed(layout, labels=False):
    found = checked_rows(layout, labels)
    lines = open(layout.path).read().splitlines()
    if how == "value":
        lines[5] = lines[5].replace(",", ",x", 1)
    elif how == "label":
        lines[5] = lines[5].rsplit(",", 1)[0] + ",7"
    elif how == "longer":
        lines += lines[1:20]
    elif how == "shorter":
        lines = lines[:-3]
    elif how == "whole-batches":  # the first 4096 rows, as checked; the next 4096 gone
        lines = lines[:4097]
    open(layout.path, "w").write("\\n".join(lines) + "\\n")
    return found

csv_files.checked_rows = checked_then_changed
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["value", "label", "longer", "shorter", "whole-batches"])
def test_a_streamed_csv_changed_after_its_check_is_one_line_saying_so(build_spec, tmp_path, how):
    rows = 8192 if how == "whole-batches" else 64
    lines = [f"{i % 7}.5,{i % 5},{i % 3}" for i in range(rows)]
    (tmp_path / "data.csv").write_text("\n".join(["a,b,label", *lines]) + "\n")
    source = {"type": "csv", "path": "data.csv", "x": ["a", "b"], "y": "label"}
    spec = {
        "name": "small",
        "seed": 1,
        "data": {"train": {"source": source, "batch_size": 16, "in_memory": False}},
        "model": {
            "inputs": {"features": {"shape": [2]}},
            "layers": [{"type": "Dense", "units": 4}],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 3}},
        "losses": {"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 1},
    }
    script = build_spec(spec)
    command = [sys.executable, "-c", CHANGE_AFTER_CHECK, str(script), how, "--output-dir", str(tmp_path / "run")]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env, check=False)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    changed = "changed since it was checked before training: rerun to check it again"
    assert errors == [f"error: data.csv: {changed}"], result.stderr[-3000:]
    assert Path(tmp_path / "run" / "history.jsonl").exists() is False
