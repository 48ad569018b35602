"""String inputs and named classes at run time: the support package's checks of string arrays
and labels (arrays and datasets), random strings, and generated scripts that train on strings."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import ROOT, Lazy, build, lazy_import, load_runtime, read_history, run_tfgen, tfgen_here

# Imported by the first test that uses them, not when a pytest-xdist worker collects this file.
keras = lazy_import("keras")
tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


@functools.cache
def shapes():
    """The named-classes target field."""
    return rt.Field((), "int32", classes=3, names=("circle", "square", "stripes"))


@functools.cache
def string_field():
    """A string input field."""
    return rt.Field((), "string")


# --- label ids ----------------------------------------------------------------------------------


def test_string_labels_map_to_the_ids_of_their_names():
    ids = rt.label_ids(np.array(["square", "circle", "stripes", "square"]), shapes(), "labels.csv")
    assert ids.tolist() == [1, 0, 2, 1]
    assert ids.dtype == np.int32


def test_bytes_and_object_labels_map_as_strings_do():
    labels = np.array([b"stripes", "circle"], dtype=object)
    assert rt.label_ids(labels, shapes(), "labels").tolist() == [2, 0]


def test_an_unknown_label_names_itself_and_its_row():
    labels = np.array(["circle", "square", "triangle", "circle", "oval"])
    with pytest.raises(rt.UserError) as raised:
        rt.label_ids(labels, shapes(), "data/shapes.csv")
    message = str(raised.value)
    assert message == "data/shapes.csv: unknown label 'triangle' at row 2 (the classes are circle, square, stripes)"


def test_string_labels_without_class_names_are_refused():
    with pytest.raises(rt.UserError, match=r"targets.label holds strings, the spec declares int32"):
        rt.label_ids(np.array(["a", "b"]), rt.Field((), "int32", classes=2), "targets.label")


# --- checked arrays -----------------------------------------------------------------------------


def test_checked_arrays_keep_string_inputs_and_map_named_labels():
    x = rt.checked_arrays(np.array(["a great film", "dull"]), {"review": string_field()}, "input")
    y = rt.checked_arrays(np.array(["stripes", "circle"]), {"shape": shapes()}, "target")
    assert x["review"].tolist() == ["a great film", "dull"]
    assert y["shape"].tolist() == [2, 0]


def test_numbers_for_a_string_input_are_one_error():
    with pytest.raises(rt.UserError, match=r"inputs.review holds float64 values, the spec declares strings"):
        rt.checked_arrays(np.zeros(3), {"review": string_field()}, "input")


def test_strings_for_a_numeric_input_are_one_error():
    field = rt.Field((), "float32")
    with pytest.raises(rt.UserError, match=r"inputs.size holds strings, the spec declares float32"):
        rt.checked_arrays(np.array(["1.5", "2"]), {"size": field}, "input")


def test_numeric_ids_of_a_named_target_are_still_range_checked():
    with pytest.raises(rt.UserError, match=r"labels outside \[0, 3\)"):
        rt.checked_arrays(np.array([0, 3]), {"shape": shapes()}, "target")


# --- synthetic strings --------------------------------------------------------------------------


def test_synthetic_strings_are_words_of_the_inputs_vocabulary_and_seeded():
    inputs = {"review": rt.Field((), "string", classes=5), "tags": rt.Field((3,), "string")}
    x, y = rt.synthetic_arrays(32, inputs, {"shape": shapes()}, seed=7)
    again, _ = rt.synthetic_arrays(32, inputs, {"shape": shapes()}, seed=7)
    assert x["review"].shape == (32,) and x["tags"].shape == (32, 3)
    words = {word for text in x["review"].tolist() for word in text.split()}
    assert words <= {f"w{i}" for i in range(5)}
    assert x["review"].tolist() == again["review"].tolist()
    assert set(y["shape"].tolist()) <= {0, 1, 2}


# --- datasets -----------------------------------------------------------------------------------


def test_a_dataset_of_string_labels_streams_their_ids():
    data = tf.data.Dataset.from_tensor_slices((["a", "b", "c"], ["square", "stripes", "circle"]))
    named = rt.named_examples(data, {"review": string_field()}, {"shape": shapes()})
    ids = [int(y["shape"]) for _, y in named.as_numpy_iterator()]
    assert ids == [1, 2, 0]


def test_an_unknown_label_in_a_dataset_stops_the_stream_naming_the_classes():
    data = tf.data.Dataset.from_tensor_slices((["a", "b"], ["square", "triangle"]))
    named = rt.named_examples(data, {"review": string_field()}, {"shape": shapes()})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"targets.shape: a label that is not one of the classes"):
        list(named.as_numpy_iterator())


def test_a_dataset_of_numbers_for_a_string_input_is_one_error():
    data = tf.data.Dataset.from_tensor_slices(([1.0, 2.0], [0, 1]))
    named = rt.named_examples(data, {"review": string_field()}, {"shape": shapes()})
    with pytest.raises(rt.UserError, match=r"inputs.review has float32 elements, the spec declares string"):
        rt.data.element_shapes(named, {"review": string_field()}, {"shape": shapes()}, "loader:load")


# --- generated scripts that train on strings (real processes) -----------------------------------

DATA_MODULE = '''
import numpy as np

GOOD = ["a great film", "loved the acting", "wonderful and moving", "great fun", "superb plot"]
BAD = ["a dull film", "hated the acting", "boring and slow", "awful fun", "weak plot"]


def rows(n, seed, extra="", column=False):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=n)
    texts = np.array([(GOOD if y else BAD)[rng.integers(0, 5)] + extra for y in labels])
    names = ["positive" if y else "negative" for y in labels]
    return {"review": texts[:, None] if column else texts}, {"sentiment": np.array(names, dtype=object)}


def train(column=False):
    return rows(160, seed=0, column=column)


def held_out(column=False):
    """Validation rows: each holds `zebra`, a word no training row has."""
    return rows(32, seed=1, extra=" zebra", column=column)
'''

# Runs a generated script in this process, SIGKILLed right after its K-th checkpoint (0: never),
# then reports the adapted vocabulary and the trained model's predictions on raw strings.
RUNNER = """
import json, os, signal, sys

sys.path.insert(0, sys.argv[1])
from harness import load_script, record_models

import numpy as np
import tensorflow as tf

script, report, kill_after, *argv = sys.argv[2:]
if int(kill_after):
    save, saves = tf.train.CheckpointManager.save, []

    def save_then_die(manager, *args, **kwargs):
        path = save(manager, *args, **kwargs)
        saves.append(path)
        if len(saves) == int(kill_after):
            os.kill(os.getpid(), signal.SIGKILL)
        return path

    tf.train.CheckpointManager.save = save_then_die
module = load_script(script)
built = record_models(module)
module.main(argv)
model = built[-1]
layer = model.get_layer("adapted_text_vectorization")
probes = [[p] for p in PROBES] if model.input["review"].shape[1:] == (1,) else PROBES
predictions = model.predict(tf.constant(probes), verbose=0)["sentiment"]
with open(report, "w") as handle:
    json.dump({"vocabulary": [str(t) for t in layer.get_vocabulary()], "predictions": predictions.tolist()}, handle)
"""

PROBES = ["a great film", "a dull film", "zebra"]

# In a fresh process: the exported files predict on raw strings.
PREDICT = """
import json, sys
import keras, tensorflow as tf
folder, probes = sys.argv[1], json.loads(sys.argv[2])
model = keras.saving.load_model(folder + "/model.keras")
if model.input["review"].shape[1:] == (1,):  # one string per example, as a column
    probes = [[p] for p in probes]
found = {"keras": model.predict(tf.constant(probes), verbose=0)["sentiment"].tolist()}
if len(sys.argv) > 3:
    loaded = tf.saved_model.load(folder + "/saved_model")  # kept: `serve` reads its variables
    served = loaded.serve({"review": tf.constant(probes)})
    found["saved_model"] = served["sentiment"].numpy().tolist()
print(json.dumps(found))
"""


def text_classifier(**overrides) -> dict:
    """A string per example, TextVectorization adapted in the model, Embedding, pooling, 2 named classes."""
    spec = {
        "name": "reviews",
        "seed": 5,
        "deterministic": True,
        "data": {
            "train": {
                "source": {"type": "python", "function": "reviews_data:train"},
                "batch_size": 16,
                "shuffle": 160,
            },
            "validation": {"source": {"type": "python", "function": "reviews_data:held_out"}},
        },
        "model": {
            "inputs": {"review": {"shape": [], "dtype": "string"}},
            "layers": [
                {"type": "TextVectorization", "max_tokens": 40, "output_sequence_length": 5, "adapt": True},
                {"type": "Embedding", "input_dim": 40, "output_dim": 8},
                {"type": "GlobalAveragePooling1D"},
            ],
            "outputs": {"sentiment": [{"type": "Dense", "units": 2}]},
        },
        "targets": {"sentiment": {"classes": ["negative", "positive"]}},
        "losses": {"sentiment": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "metrics": {"sentiment": ["SparseCategoricalAccuracy"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.05},
        "train": {"epochs": 3},
        "checkpoint": {"every_steps": 5, "keep": 2},
    }
    spec.update(overrides)
    return spec


def _build_text(tmp_path, spec):
    (tmp_path / "reviews_data.py").write_text(DATA_MODULE)
    return build(tmp_path, spec, spec["name"])


def _run(tmp_path, script, tag, kill_after=0):
    runner = tmp_path / "runner.py"
    runner.write_text(f"PROBES = {PROBES!r}\n" + RUNNER)
    report = tmp_path / f"{tag}.json"
    command = [sys.executable, str(runner), str(ROOT / "tests" / "e2e"), str(script), str(report), str(kill_after)]
    command += ["--output-dir", str(tmp_path / tag)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600, env=_ENV, check=False)
    return result, report


def _predict_elsewhere(folder, *saved_model):
    command = [sys.executable, "-c", PREDICT, str(folder), json.dumps(PROBES), *saved_model]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=_ENV, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _strip(rows):
    return [
        {k: v for k, v in row.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")}
        for row in rows
    ]


_ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}


@pytest.mark.slow
def test_a_text_classifier_adapts_on_training_rows_resumes_exactly_and_exports_a_model_of_raw_strings(tmp_path):
    script = _build_text(tmp_path, text_classifier())
    straight, report = _run(tmp_path, script, "straight")
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert straight.stdout.count("Adapted adapted_text_vectorization") == 1
    expected = json.loads(report.read_text())
    # Adapted on training batches only: the validation rows' own word is out of vocabulary.
    assert "great" in expected["vocabulary"] and "dull" in expected["vocabulary"]
    assert "zebra" not in expected["vocabulary"]
    history = read_history(tmp_path / "straight")
    assert history[-1]["val_sparse_categorical_accuracy"] == 1.0

    killed, _ = _run(tmp_path, script, "killed", 3)
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert len(read_history(tmp_path / "killed")) < 3, "killed too late to test a resume"
    resumed, report = _run(tmp_path, script, "killed")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "Adapted" not in resumed.stdout
    again = json.loads(report.read_text())
    assert again["vocabulary"] == expected["vocabulary"]  # restored from the checkpoint's copy
    assert _strip(read_history(tmp_path / "killed")) == _strip(history)
    assert again["predictions"] == expected["predictions"]

    exported = _predict_elsewhere(tmp_path / "straight")
    assert exported["keras"] == expected["predictions"]


@pytest.mark.slow
def test_strings_train_under_mirrored_on_two_cpus_and_the_saved_model_takes_raw_strings(tmp_path):
    """The input is a column of one string per example: `predict(tf.constant([["a great film"]]))`."""
    spec = text_classifier(
        strategy={"type": "mirrored", "cpu_replicas": 2},
        train={"epochs": 1},
        checkpoint={"export": ["keras", "saved_model"]},
    )
    spec["model"]["inputs"]["review"]["shape"] = [1]
    spec["data"]["train"]["source"]["kwargs"] = {"column": True}
    spec["data"]["validation"]["source"]["kwargs"] = {"column": True}
    script = _build_text(tmp_path, spec)
    result, report = _run(tmp_path, script, "mirrored")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 replica(s)" in result.stdout
    assert result.stdout.count("Adapted adapted_text_vectorization") == 1
    expected = json.loads(report.read_text())
    assert "zebra" not in expected["vocabulary"]
    exported = _predict_elsewhere(tmp_path / "mirrored", "saved_model")
    np.testing.assert_allclose(exported["keras"], expected["predictions"], rtol=1e-6)
    np.testing.assert_allclose(exported["saved_model"], expected["predictions"], rtol=1e-6)


@pytest.mark.slow
def test_preprocessing_that_turns_strings_into_token_ids_trains_on_real_rows(tmp_path):
    vectorize = {
        "type": "TextVectorization",
        "vocabulary": ["great", "dull", "film", "fun"],
        "output_sequence_length": 4,
    }
    spec = text_classifier(train={"epochs": 1}, checkpoint={"every_epochs": 1})
    spec["data"]["train"]["preprocess"] = [vectorize]
    spec["model"]["layers"] = [
        {"type": "Embedding", "input_dim": 6, "output_dim": 4},
        {"type": "GlobalAveragePooling1D"},
    ]
    script = _build_text(tmp_path, spec)
    assert "preprocessed(inputs[" in script.read_text()
    result = subprocess.run(
        [sys.executable, str(script), "--output-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env=_ENV,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    model = keras.saving.load_model(tmp_path / "run" / "model.keras")
    assert model.input["review"].dtype == "int64" and tuple(model.input["review"].shape) == (None, 4)


@pytest.mark.slow
def test_deep_validation_names_the_side_where_strings_go_wrong(tmp_path):
    dense = text_classifier()
    dense["model"]["layers"] = [{"type": "Dense", "units": 4}]
    rescaled = text_classifier()
    rescaled["data"]["train"]["preprocess"] = [{"type": "Rescaling", "scale": 0.5}]
    rescaled["model"]["layers"] = [{"type": "Dense", "units": 4}]
    flat = text_classifier()
    flat["data"]["train"]["preprocess"] = [
        {"type": "TextVectorization", "vocabulary": ["great", "dull"], "output_sequence_length": 4}
    ]
    flat["model"]["layers"] = [{"type": "Conv2D", "filters": 2, "kernel_size": 2}]
    fine = text_classifier()
    for stem, spec in (("dense", dense), ("rescaled", rescaled), ("flat", flat), ("fine", fine)):
        (tmp_path / f"{stem}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (tmp_path / "reviews_data.py").write_text(DATA_MODULE)
    result = run_tfgen("validate", "--deep", "dense.yaml", "rescaled.yaml", "flat.yaml", "fine.yaml", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    string_rule = "its input holds strings, which it cannot compute on"
    assert any(line.startswith("dense.yaml:") and "model.layers.0: Dense: " + string_rule in line for line in lines)
    assert any(
        line.startswith("rescaled.yaml:") and "data.train.preprocess.0: Rescaling: " + string_rule in line
        for line in lines
    )
    # The model side: the model's input is what TextVectorization gives (token ids, rank 1 per example).
    assert any(line.startswith("flat.yaml:") and "model.layers.0: Conv2D: " in line for line in lines)
    assert not any(line.startswith("fine.yaml:") for line in lines)


@pytest.mark.slow
def test_smoke_trains_and_resumes_a_text_classifier_on_synthetic_strings(tmp_path):
    (tmp_path / "reviews.yaml").write_text(yaml.safe_dump(text_classifier(), sort_keys=False))
    (tmp_path / "reviews_data.py").write_text(DATA_MODULE)
    result = tfgen_here("smoke", "reviews.yaml", "--steps", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "PASS reviews.yaml (saved at epoch 1, resumed to epoch 2" in result.stdout


@pytest.mark.slow
def test_an_unknown_label_in_arrays_or_a_stream_stops_the_script_in_one_line(tmp_path):
    module = (
        DATA_MODULE
        + """

def unknown(dataset=False):
    x, y = rows(64, seed=2)
    y["sentiment"][7] = "neutral"
    if dataset:
        import tensorflow as tf

        return tf.data.Dataset.from_tensor_slices((x, {"sentiment": y["sentiment"].astype(str)}))
    return x, y
"""
    )
    (tmp_path / "reviews_data.py").write_text(module)
    for dataset, expected in (
        (False, "error: reviews_data:unknown: targets.sentiment: unknown label 'neutral' at row 7"),
        (True, "targets.sentiment: a label that is not one of the classes"),
    ):
        spec = text_classifier(name=f"unknown_{dataset}".lower(), train={"epochs": 1})
        spec["data"]["train"]["source"] = {"type": "python", "function": "reviews_data:unknown"}
        spec["data"]["train"]["source"]["kwargs"] = {"dataset": dataset}
        script = build(tmp_path, spec, spec["name"])
        result = subprocess.run(
            [sys.executable, str(script), "--output-dir", str(tmp_path / spec["name"])],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
            env=_ENV,
            check=False,
        )
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert result.returncode == 1, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        assert len(errors) == 1 and expected in errors[0], result.stderr[-3000:]
