"""`train.phases` and backbones in validation: a phase that freezes every layer item is refused at
the phase (it would train nothing), and `batchnorm: inference` is a backbone's option."""

from __future__ import annotations

import yaml
from conftest import base_spec

from tfgen.cli import main


def _validate(tmp_path, spec, capsys) -> tuple[int, str]:
    path = tmp_path / "phased.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    code = main(["validate", str(path)])
    return code, capsys.readouterr().err


def _phased(*frozen: list[str], trainable: bool = True) -> dict:
    """Two shared Dense layers (`body`, `neck`) and a head (`label`); one phase per `frozen`
    list, the last one taking the epochs left of 3."""
    phases = [{"epochs": 1, "frozen": names} for names in frozen]
    phases[-1]["epochs"] = 3 - (len(frozen) - 1)
    return base_spec(
        model={
            "inputs": {"features": {"shape": [8]}},
            "layers": [
                {"type": "Dense", "units": 16, "name": "body"},
                {"type": "Dense", "units": 8, "name": "neck", "trainable": trainable},
            ],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        train={"epochs": 3, "phases": phases},
    )


def test_a_phase_that_freezes_every_layer_is_refused_at_the_phase(tmp_path, capsys):
    code, err = _validate(tmp_path, _phased(["body"], ["trunk", "label"]), capsys)
    assert code == 2
    assert err.count("\n") == 1, err
    assert (
        "train.phases.1.frozen: the phase freezes every layer that has weights, so epochs 2-3 would train nothing"
        in err
    )


def test_layers_frozen_for_the_whole_run_count_as_frozen_in_each_phase(tmp_path, capsys):
    code, err = _validate(tmp_path, _phased(["body", "label"], trainable=False), capsys)
    assert code == 2 and "train.phases.0.frozen: the phase freezes every layer" in err, err


def test_a_phase_that_leaves_one_layer_item_unfrozen_validates(tmp_path, capsys):
    code, err = _validate(tmp_path, _phased(["body"], ["trunk"]), capsys)
    assert code == 0, err


def test_batchnorm_inference_is_a_backbones_option_and_nothing_else_is(tmp_path, capsys):
    backbone = {"application": "MobileNetV2", "weights": None, "name": "backbone", "alpha": 0.35}
    spec = base_spec(
        model={
            "inputs": {"image": {"shape": [32, 32, 3]}},
            "layers": [backbone | {"batchnorm": "inference"}],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        }
    )
    assert _validate(tmp_path, spec, capsys) == (0, "")
    spec["model"]["layers"] = [backbone | {"batchnorm": "train"}]
    code, err = _validate(tmp_path, spec, capsys)
    assert code == 2 and "model.layers.0.batchnorm:" in err and "'inference'" in err, err
