"""String inputs and named classes at run time: the support package's checks of string arrays
and labels (arrays and datasets), random strings, and generated scripts that train on strings."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from conftest import load_runtime

rt = load_runtime()

SHAPES = rt.Field((), "int32", classes=3, names=("circle", "square", "stripes"))
TEXT = rt.Field((), "string")


# --- label ids ----------------------------------------------------------------------------------


def test_string_labels_map_to_the_ids_of_their_names():
    ids = rt.label_ids(np.array(["square", "circle", "stripes", "square"]), SHAPES, "labels.csv")
    assert ids.tolist() == [1, 0, 2, 1]
    assert ids.dtype == np.int32


def test_bytes_and_object_labels_map_as_strings_do():
    labels = np.array([b"stripes", "circle"], dtype=object)
    assert rt.label_ids(labels, SHAPES, "labels").tolist() == [2, 0]


def test_an_unknown_label_names_itself_and_its_row():
    labels = np.array(["circle", "square", "triangle", "circle", "oval"])
    with pytest.raises(rt.UserError) as raised:
        rt.label_ids(labels, SHAPES, "data/shapes.csv")
    message = str(raised.value)
    assert message == "data/shapes.csv: unknown label 'triangle' at row 2 (the classes are circle, square, stripes)"


def test_string_labels_without_class_names_are_refused():
    with pytest.raises(rt.UserError, match=r"targets.label holds strings, the spec declares int32"):
        rt.label_ids(np.array(["a", "b"]), rt.Field((), "int32", classes=2), "targets.label")


# --- checked arrays -----------------------------------------------------------------------------


def test_checked_arrays_keep_string_inputs_and_map_named_labels():
    x = rt.checked_arrays(np.array(["a great film", "dull"]), {"review": TEXT}, "input")
    y = rt.checked_arrays(np.array(["stripes", "circle"]), {"shape": SHAPES}, "target")
    assert x["review"].tolist() == ["a great film", "dull"]
    assert y["shape"].tolist() == [2, 0]


def test_numbers_for_a_string_input_are_one_error():
    with pytest.raises(rt.UserError, match=r"inputs.review holds float64 values, the spec declares strings"):
        rt.checked_arrays(np.zeros(3), {"review": TEXT}, "input")


def test_strings_for_a_numeric_input_are_one_error():
    field = rt.Field((), "float32")
    with pytest.raises(rt.UserError, match=r"inputs.size holds strings, the spec declares float32"):
        rt.checked_arrays(np.array(["1.5", "2"]), {"size": field}, "input")


def test_numeric_ids_of_a_named_target_are_still_range_checked():
    with pytest.raises(rt.UserError, match=r"labels outside \[0, 3\)"):
        rt.checked_arrays(np.array([0, 3]), {"shape": SHAPES}, "target")


# --- synthetic strings --------------------------------------------------------------------------


def test_synthetic_strings_are_words_of_the_inputs_vocabulary_and_seeded():
    inputs = {"review": rt.Field((), "string", classes=5), "tags": rt.Field((3,), "string")}
    x, y = rt.synthetic_arrays(32, inputs, {"shape": SHAPES}, seed=7)
    again, _ = rt.synthetic_arrays(32, inputs, {"shape": SHAPES}, seed=7)
    assert x["review"].shape == (32,) and x["tags"].shape == (32, 3)
    words = {word for text in x["review"].tolist() for word in text.split()}
    assert words <= {f"w{i}" for i in range(5)}
    assert x["review"].tolist() == again["review"].tolist()
    assert set(y["shape"].tolist()) <= {0, 1, 2}


# --- datasets -----------------------------------------------------------------------------------


def test_a_dataset_of_string_labels_streams_their_ids():
    data = tf.data.Dataset.from_tensor_slices((["a", "b", "c"], ["square", "stripes", "circle"]))
    named = rt.named_examples(data, {"review": TEXT}, {"shape": SHAPES})
    ids = [int(y["shape"]) for _, y in named.as_numpy_iterator()]
    assert ids == [1, 2, 0]


def test_an_unknown_label_in_a_dataset_stops_the_stream_naming_the_classes():
    data = tf.data.Dataset.from_tensor_slices((["a", "b"], ["square", "triangle"]))
    named = rt.named_examples(data, {"review": TEXT}, {"shape": SHAPES})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"targets.shape: a label that is not one of the classes"):
        list(named.as_numpy_iterator())


def test_a_dataset_of_numbers_for_a_string_input_is_one_error():
    data = tf.data.Dataset.from_tensor_slices(([1.0, 2.0], [0, 1]))
    named = rt.named_examples(data, {"review": TEXT}, {"shape": SHAPES})
    with pytest.raises(rt.UserError, match=r"inputs.review has float32 elements, the spec declares string"):
        rt.data.element_shapes(named, {"review": TEXT}, {"shape": SHAPES}, "loader:load")
