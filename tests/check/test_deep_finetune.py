"""`tfgen validate --deep` on fine-tuning specs: it warns (a warning line, the spec still valid)
when a backbone's input is not a size its imagenet weights were trained on, runs Keras's own
checks of `imagenet` arguments without downloading anything, names a weights file that cannot be
read, and refuses a phase that leaves only layers without weights to train."""

from __future__ import annotations

import pytest
import yaml
from conftest import base_spec, unreadable_weights_files

from tfgen.cli import main

pytestmark = pytest.mark.slow


def _deep(tmp_path, spec, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tuned.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    code = main(["validate", "--deep", "tuned.yaml"])
    return code, capsys.readouterr().err


def _backbone(size=32, **options):
    backbone = {"application": "MobileNetV2", "name": "backbone", "alpha": 0.35, "pooling": "avg"} | options
    return base_spec(
        model={
            "inputs": {"image": {"shape": [size, size, 3]}},
            "layers": [backbone],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        }
    )


def test_deep_warns_when_the_input_size_is_not_one_the_imagenet_weights_were_trained_on(tmp_path, capsys, monkeypatch):
    code, err = _deep(tmp_path, _backbone(32, weights="imagenet"), capsys, monkeypatch)
    assert code == 0, err
    assert err.startswith("tuned.yaml:") and err.count("\n") == 1, err
    assert "model.layers.0: warning: MobileNetV2: the input is 32x32x3; Keras warns of the imagenet weights: " in err
    assert "`rows` is not in [96, 128, 160, 192, 224]" in err
    code, err = _deep(tmp_path, _backbone(96, weights="imagenet"), capsys, monkeypatch)
    assert (code, err) == (0, "")


def test_deep_runs_kerass_checks_of_imagenet_arguments_without_downloading(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    code, err = _deep(tmp_path, _backbone(96, weights="imagenet", alpha=0.3), capsys, monkeypatch)
    assert code == 2 and err.count("\n") == 1, err
    assert "model.layers.0: MobileNetV2: If imagenet weights are being loaded, alpha must be one of" in err
    assert not (tmp_path / "keras" / "models").exists()


def test_deep_names_a_weights_file_that_cannot_be_read_and_what_is_wrong(tmp_path, capsys, monkeypatch):
    expected = unreadable_weights_files(tmp_path)
    for name, message in expected.items():
        code, err = _deep(tmp_path, _backbone(32, weights=name), capsys, monkeypatch)
        assert code == 2 and err.count("\n") == 1, err
        assert err.endswith(f": model.layers.0: MobileNetV2: {message}\n"), err


def test_deep_refuses_a_phase_that_leaves_only_layers_without_weights(tmp_path, capsys, monkeypatch):
    spec = base_spec(train={"epochs": 2, "phases": [{"epochs": 1}, {"epochs": 1, "frozen": ["body", "label"]}]})
    spec["model"]["layers"] = [{"type": "Dense", "units": 8, "name": "body"}, {"type": "Dropout", "rate": 0.1}]
    code, err = _deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2 and err.count("\n") == 1, err
    assert err.endswith(
        ": train.phases.1.frozen: the phase freezes every layer that has weights, so epoch 2 would train nothing: "
        "leave some layer out of `frozen`\n"
    ), err
    spec["model"]["layers"][1] = {"type": "Dense", "units": 4}
    assert _deep(tmp_path, spec, capsys, monkeypatch) == (0, "")


def _frozen_trunk(*layers):
    spec = base_spec(train={"epochs": 2, "phases": [{"epochs": 1, "frozen": ["trunk"]}, {"epochs": 1}]})
    spec["model"]["layers"] = list(layers)
    return spec


def test_deep_builds_a_frozen_groups_layers_under_the_names_the_script_gives_them(tmp_path, capsys, monkeypatch):
    """The script names the unnamed layers of a frozen group `<group>_<n>` (the phases find them by
    name): --deep builds those names, so its summary is the script's model, and a layer the user
    named like one of them is the clash the script's Keras would refuse, refused as a spec error."""
    unnamed = {"type": "Dense", "units": 16, "activation": "relu"}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tuned.yaml").write_text(yaml.safe_dump(_frozen_trunk(unnamed, unnamed), sort_keys=False))
    assert main(["validate", "--summary", "tuned.yaml"]) == 0
    summary = capsys.readouterr().out
    assert "\ntrunk_1 " in summary and "\ntrunk_2 " in summary, summary
    code, err = _deep(tmp_path, _frozen_trunk(unnamed, {**unnamed, "name": "trunk_1"}), capsys, monkeypatch)
    assert code == 2 and err.count("\n") == 1, err
    # Refused before Keras is asked (plain `validate` too): the name is one the phases give.
    assert err.startswith("tuned.yaml:") and "`trunk_1` is the name `train.phases` gives an unnamed layer" in err, err
