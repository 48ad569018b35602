"""Which scripts get `predict` and `evaluate`, and how each reads new data: its training
source's call on the command line's path (a python source's: the reference it names)."""

from __future__ import annotations

import yaml
from conftest import ROOT, base_spec

from tfgen.generate.plan import make_view
from tfgen.paths import display_path
from tfgen.spec.loader import load_text
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate


def view_of_spec(spec: dict):
    located = load_text(yaml.safe_dump(spec), "x.yaml")
    return make_view(validate(located), spec_path="x", spec_sha256="0" * 64, version="0")


def predict_view_of(name: str):
    path = ROOT / "specs" / f"{name}.yaml"
    spec = validate(resolve(path, display_path(path), []))
    return make_view(spec, spec_path="x", spec_sha256="0" * 64, version="0").predict


def test_a_csv_is_read_whole_from_the_given_path_its_targets_only_when_labelled():
    p = predict_view_of("houses")
    assert p.read_call.startswith("rt.read_csv(path, INPUTS, targets, x=")
    assert p.read_call.endswith(", stream=False, labelled=labelled)")
    assert (p.pipeline, p.logits, p.total) == ("validation_pipeline", "()", "")


def test_a_folder_is_read_with_its_options_and_class_outputs_of_logits_are_named():
    shapes = predict_view_of("shapes")
    assert shapes.read_call == "rt.image_folder(path, INPUTS, targets, image_size=(32, 32), labelled=labelled)"
    assert shapes.logits == "('shape',)"
    assert predict_view_of("reviews").read_call == "rt.text_folder(path, INPUTS, targets, labelled=labelled)"


def test_a_python_source_calls_the_reference_given_without_the_specs_arguments():
    p = predict_view_of("digits")
    assert p.read_call == "rt.from_function(path, INPUTS, targets, SPEC_DIR)"
    assert "module:function" in p.path_note


def test_other_sources_refuse_naming_the_types_new_data_is_read_as():
    p = predict_view_of("cifar")  # keras.datasets
    assert p.read_call is None
    assert p.refusal == (
        "predict and evaluate read csv, image_folder, text_folder, npz or python data; this script trains on keras data"
    )


def test_an_npz_source_reads_new_arrays_by_the_training_sources_keys_without_its_targets():
    p = predict_view_of("mnist")
    assert p.read_call == "load_npz(path, 'x_train', 'y_train', labelled=labelled)"  # black writes it with "


def test_scripts_without_one_model_or_with_preprocessing_outside_it_have_no_commands():
    preprocessed = base_spec()
    preprocessed["data"]["train"]["preprocess"] = [{"type": "Rescaling", "scale": 0.5}]
    assert view_of_spec(preprocessed).predict is None  # its preprocessing is in the pipeline, not the model
    assert view_of_spec(base_spec()).predict is not None
    assert predict_view_of("distill") is None  # its losses need the teacher
    for name in ("gan", "custom_step"):  # networks of their own: no single model
        assert "predicts=True" not in (ROOT / "generated" / f"{name}.py").read_text()
