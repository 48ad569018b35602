"""A `python` source keeps tfgen's promises or says which one it breaks, in one line: what it
returns is named when it is not an `(inputs, targets)` pair, a Dataset that reorders itself
between iterations is a warning, a Dataset cannot be split by `validation_split`, and a Dataset
of batches is named as such."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import Lazy, lazy_import, load_runtime, write_module

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def fields():
    """The inputs and targets a source must give: x (6 floats) and y (one of 2 classes)."""
    return {"x": rt.Field((6,), "float32")}, {"y": rt.Field((), "int32", classes=2)}


def load(tmp_path, body, monkeypatch):
    """`rt.from_function` on a module `src` in tmp_path whose `load()` runs `body`."""
    write_module(tmp_path, "src", "import numpy as np\nimport tensorflow as tf\n\n\ndef load():\n" + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "src", raising=False)  # each test's own module
    return rt.from_function("src:load", *fields(), str(tmp_path))


def test_one_array_is_named_as_one_array_not_as_examples_of_shape_empty(tmp_path, monkeypatch):
    with pytest.raises(
        rt.UserError, match=r"^src:load: returned one array of shape \(2000, 7\), not an `\(inputs, targets\)` pair$"
    ):
        load(tmp_path, "    return np.zeros((2000, 7))\n", monkeypatch)


def test_a_tuple_of_the_wrong_length_is_named(tmp_path, monkeypatch):
    with pytest.raises(rt.UserError, match=r"returned a tuple of 3 items, not an `\(inputs, targets\)` pair$"):
        load(tmp_path, "    return np.zeros((4, 6)), np.zeros(4), np.zeros(4)\n", monkeypatch)


def test_a_dataset_of_single_tensors_is_named(tmp_path, monkeypatch):
    with pytest.raises(
        rt.UserError,
        match=r"^src:load: gives elements of one tensor of shape \(6,\), not an `\(inputs, targets\)` pair$",
    ):
        load(tmp_path, "    return tf.data.Dataset.from_tensor_slices(np.zeros((4, 6)))\n", monkeypatch)


def test_a_dataset_of_batches_says_to_let_tfgen_batch(tmp_path, monkeypatch):
    body = "    ds = tf.data.Dataset.from_tensor_slices((np.zeros((8, 6), 'float32'), np.zeros(8, 'int32')))\n"
    body += "    return ds.batch(4)\n"
    with pytest.raises(
        rt.UserError, match=r"inputs.x has elements of shape \(None, 6\), the spec declares \(6,\): it gives batches"
    ):
        load(tmp_path, body, monkeypatch)


def test_a_dataset_that_reshuffles_itself_is_a_warning(tmp_path, monkeypatch, capsys):
    body = "    ds = tf.data.Dataset.from_tensor_slices((np.arange(600, dtype='float32').reshape(100, 6), np.zeros(100, 'int32')))\n"
    body += "    return ds.shuffle(100)\n"
    load(tmp_path, body, monkeypatch)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("warning: src:load: its dataset changes order between iterations: pass it shuffle=False")


def test_a_dataset_in_a_fixed_order_gives_no_warning(tmp_path, monkeypatch, capsys):
    body = "    return tf.data.Dataset.from_tensor_slices((np.zeros((10, 6), 'float32'), np.zeros(10, 'int32')))\n"
    data = load(tmp_path, body, monkeypatch)
    assert isinstance(data, tf.data.Dataset)
    assert capsys.readouterr().err == ""


def test_validation_split_of_a_dataset_is_one_line_not_a_type_error():
    data = tf.data.Dataset.from_tensor_slices((np.zeros((4, 6)), np.zeros(4)))
    with pytest.raises(
        rt.UserError, match=r"^`validation_split` needs arrays, the source gave a Dataset: give the held-out"
    ):
        rt.split_arrays(data, 0.2, 1)


def test_first_rows_cuts_arrays_and_datasets():
    arrays = ({"x": np.arange(10)}, {"y": np.arange(10)})
    assert [len(a["x" if i == 0 else "y"]) for i, a in enumerate(rt.first_rows(arrays, 3))] == [3, 3]
    dataset = tf.data.Dataset.range(10)
    assert list(rt.first_rows(dataset, 4).as_numpy_iterator()) == [0, 1, 2, 3]
