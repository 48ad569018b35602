"""String inputs and named classes in the spec: what validates, what is a located one-line
error, and what the planner decides for a model that takes strings (no TensorFlow here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import base_spec, build, tfgen_here

from tfgen.generate.decisions import Jit, Placement, resolve_in_memory, resolve_jit
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate as validate_spec


def text_spec(**overrides) -> dict:
    """A small spec whose one input is a string per example, hashed to ids, with named classes."""
    spec = base_spec(
        model={
            "inputs": {"review": {"shape": [], "dtype": "string"}},
            "layers": [
                {"type": "Hashing", "num_bins": 16},
                {"type": "Embedding", "input_dim": 16, "output_dim": 4},
            ],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        targets={"label": {"classes": ["circle", "square", "stripes"]}},
    )
    spec.update(overrides)
    return spec


def validate(tmp_path: Path, spec: dict) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", str(path), cwd=tmp_path)
    return result.returncode, result.stderr.strip()


def loaded(tmp_path: Path, spec: dict):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return validate_spec(resolve(path, "spec.yaml"))


def test_a_string_input_with_named_classes_validates(tmp_path):
    assert validate(tmp_path, text_spec()) == (0, "")


def test_named_classes_count_their_names_and_default_to_int32_ids(tmp_path):
    target = loaded(tmp_path, text_spec()).targets["label"]
    assert target.class_count == 3
    assert target.class_names == ("circle", "square", "stripes")
    assert target.dtype == "int32"


def test_a_counted_class_target_has_no_names(tmp_path):
    target = loaded(tmp_path, base_spec()).targets["label"]
    assert (target.class_count, target.class_names) == (3, None)


def test_a_string_target_is_a_located_error_naming_class_names(tmp_path):
    spec = text_spec(targets={"label": {"shape": [], "dtype": "string", "classes": 3}})
    code, error = validate(tmp_path, spec)
    assert code == 2
    assert len(error.splitlines()) == 1
    assert "spec.yaml:" in error and "targets.label.dtype" in error
    assert "string labels need a class target that lists its names, `classes: [name, ...]`" in error


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        (["circle"], "list at least 2 class names, found 1"),
        (["circle", "square", "circle"], "class `circle` is listed twice"),
        (["circle", ""], "class 1 has an empty name"),
    ],
)
def test_bad_class_names_are_located_errors(tmp_path, classes, message):
    code, error = validate(tmp_path, text_spec(targets={"label": {"classes": classes}}))
    assert code == 2
    assert "targets.label.classes" in error
    assert message in error


def test_in_memory_with_a_string_input_is_a_located_error(tmp_path):
    spec = text_spec()
    spec["data"]["train"]["in_memory"] = True
    code, error = validate(tmp_path, spec)
    assert code == 2
    assert "data.train.in_memory" in error
    assert "the input `review` holds strings" in error


def test_a_string_input_streams_through_tf_data_when_in_memory_is_auto(tmp_path):
    assert resolve_in_memory(loaded(tmp_path, text_spec())) is Placement.STREAM


def test_a_step_that_takes_strings_is_never_xla_compiled(tmp_path):
    assert resolve_jit(loaded(tmp_path, text_spec())) is Jit.OFF
    spec = text_spec(train={"epochs": 1, "jit_compile": True})
    code, error = validate(tmp_path, spec)
    assert code == 2
    assert "train.jit_compile" in error and "XLA has no string type" in error


def test_a_tfrecord_string_feature_must_fill_a_string_input(tmp_path):
    features = {"review": {"shape": [], "dtype": "float32"}, "label": {"shape": [], "dtype": "int64"}}
    spec = text_spec()
    spec["data"]["train"]["source"] = {"type": "tfrecord", "files": "data/*.tfrecord", "features": features}
    code, error = validate(tmp_path, spec)
    assert code == 2
    assert "the input `review` holds strings: declare the feature `dtype: string`" in error


def test_string_labels_in_tfrecord_files_are_refused(tmp_path):
    features = {"review": {"shape": [], "dtype": "string"}, "label": {"shape": [], "dtype": "string"}}
    spec = text_spec()
    spec["data"]["train"]["source"] = {"type": "tfrecord", "files": "data/*.tfrecord", "features": features}
    code, error = validate(tmp_path, spec)
    assert code == 2
    assert "features.label" in error and "string labels in TFRecord files are not supported" in error


def test_the_script_declares_string_fields_and_class_names(tmp_path):
    script = build(tmp_path, text_spec()).read_text()
    assert 'INPUTS = {"review": rt.Field((), "string")}' in script
    assert 'rt.Field((), "int32", classes=3, names=("circle", "square", "stripes"))' in script


def _adapted(layer: dict) -> dict:
    spec = text_spec()
    spec["model"]["layers"] = [layer, {"type": "Embedding", "input_dim": 20, "output_dim": 4}]
    return spec


def test_string_layers_adapt_on_a_string_input(tmp_path):
    for layer in (
        {"type": "TextVectorization", "max_tokens": 20, "output_sequence_length": 4, "adapt": True},
        {"type": "StringLookup", "adapt": {"batches": 4}},
    ):
        assert validate(tmp_path, _adapted(layer)) == (0, "")


@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
def test_an_adapted_one_hot_or_multi_hot_lookup_needs_no_max_tokens(mode, tmp_path):
    """Keras adapts, then builds: the width is the vocabulary's size, which the script finds
    before it builds the model (was: refused without `max_tokens` and `pad_to_max_tokens`)."""
    layer = {"type": "StringLookup", "output_mode": mode, "adapt": True}
    assert validate(tmp_path, _adapted(layer)) == (0, "")
    script = build(tmp_path, _adapted(layer)).read_text()
    assert "def build_model(vocabulary_sizes):" in script
    assert 'max_tokens=vocabulary_sizes["adapted_string_lookup"]' in script
    assert f'"adapted_string_lookup": keras.layers.StringLookup(output_mode="{mode}")' in script


def test_adapted_text_vectorization_refuses_tf_idf(tmp_path):
    layer = {"type": "TextVectorization", "output_mode": "tf_idf", "max_tokens": 8, "pad_to_max_tokens": True}
    code, error = validate(tmp_path, _adapted({**layer, "adapt": True}))
    assert code == 2
    assert "an adapted `TextVectorization` cannot use `tf_idf`" in error


def test_the_planner_keeps_string_vocabularies_in_the_checkpoint(tmp_path):
    script = build(tmp_path, _adapted({"type": "StringLookup", "adapt": True})).read_text()
    assert 'KEPT_OUTSIDE = {"StringLookup": "string"}' in script
    assert "jit_compile=True" not in script
