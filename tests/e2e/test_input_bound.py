"""A generated script names a slow input pipeline in one line after its first whole epoch, and
records the fraction in that epoch's history row; a fast pipeline and in-memory arrays stay silent."""

from __future__ import annotations

import pytest
from conftest import base_spec, load_module, read_history, write_module

pytestmark = pytest.mark.slow

SOURCE = """import time

import numpy as np
import tensorflow as tf


def load(sleep, examples):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(examples, 8)).astype("float32")
    y = rng.integers(0, 3, size=examples).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    if not sleep:
        return ds

    def slow(row):
        time.sleep(sleep)
        return row

    return ds.map(lambda x, y: (tf.ensure_shape(tf.py_function(slow, [x], tf.float32), [8]), y))
"""


def python_source_spec(sleep, examples):
    """Examples in batches of 8 from a `python` source whose map sleeps `sleep` s an example
    (a module of its own per test: earlier tests' folders stay on sys.path)."""
    spec = base_spec()
    function = f"source_{sleep:g}:load".replace(".", "_")
    source = {"type": "python", "function": function, "kwargs": {"sleep": sleep, "examples": examples}}
    spec["data"] = {"train": {"source": source, "batch_size": 8, "shuffle": 256}}
    return spec


def train(build_spec, tmp_path, spec, capsys):
    if spec["data"]["train"]["source"]["type"] == "python":
        name = spec["data"]["train"]["source"]["function"].split(":")[0]
        write_module(tmp_path, name, SOURCE)
    module = load_module(build_spec(spec))
    out = tmp_path / "run"
    module.main(["--output-dir", str(out), "--fresh"])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("input-bound")]
    return lines, read_history(out)


def test_a_slow_python_source_is_named_once_with_its_fraction(build_spec, tmp_path, capsys):
    lines, history = train(build_spec, tmp_path, python_source_spec(sleep=0.003, examples=256), capsys)
    assert len(lines) == 1
    assert "waited for input" in lines[0] and "of epoch 1's time" in lines[0]
    assert "`cache: true`" in lines[0] and "num_parallel_calls" in lines[0]
    assert 0.2 < history[0]["input_wait"] <= 1.0
    assert "input_wait" not in history[1]


def test_a_fast_python_source_is_silent(build_spec, tmp_path, capsys):
    lines, history = train(build_spec, tmp_path, python_source_spec(sleep=0, examples=2048), capsys)
    assert lines == []
    assert all("input_wait" not in row for row in history)


def test_in_memory_arrays_are_never_measured(build_spec, tmp_path, capsys):
    spec = base_spec()  # synthetic arrays, sliced in the compiled loop
    spec["data"]["train"]["source"]["examples"] = 256
    lines, history = train(build_spec, tmp_path, spec, capsys)
    assert lines == []
    assert all("input_wait" not in row for row in history)
