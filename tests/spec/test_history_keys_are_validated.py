"""History keys that collide, and values the script cannot write, are validation errors."""

from __future__ import annotations

import yaml
from conftest import SPECS, base_spec, tfgen_here


def test_every_example_spec_still_validates():
    result = tfgen_here("validate", *[str(spec) for spec in SPECS])
    assert result.returncode == 0, result.stderr


def _validate(tmp_path, spec):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return tfgen_here("validate", str(path))


def test_a_metric_name_that_avoids_the_collision_passes(tmp_path):
    spec = base_spec()
    spec["metrics"] = {"label": ["SparseCategoricalAccuracy", {"type": "SparseCategoricalAccuracy", "name": "acc2"}]}
    assert _validate(tmp_path, spec).returncode == 0
    spec["metrics"]["label"][1]["name"] = "epoch"
    result = _validate(tmp_path, spec)
    assert result.returncode == 2 and "metrics.label.1.name" in result.stderr and "epoch number" in result.stderr


def test_the_largest_seed_passes_and_the_next_is_refused(tmp_path):
    assert _validate(tmp_path, base_spec(seed=2**32 - 1)).returncode == 0
    result = _validate(tmp_path, base_spec(seed=2**32))
    assert result.returncode == 2 and "seed:" in result.stderr and result.stderr[-1] == "\n"
    assert "Traceback" not in result.stderr


def test_monitoring_a_layers_added_loss_says_it_is_logged_but_not_monitored(tmp_path):
    """A model whose layers may call add_loss logs `<layer>_loss` figures known only at run time."""
    spec = base_spec(train={"epochs": 2, "early_stopping": {"monitor": "val_kl_loss"}})
    spec["model"]["layers"].append({"type": "ActivityRegularization", "l2": 0.01, "name": "kl"})
    result = _validate(tmp_path, spec)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "train.early_stopping.monitor: `val_kl_loss` is not a figure a tracker can follow" in result.stderr
    assert "add_loss term (`<layer name>_loss`) is logged, but cannot be monitored yet" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_gan_and_a_custom_step_log_to_tensorboard_and_stop_early_on_a_figure_they_log(tmp_path):
    """Once refused as "not yet": TensorBoard and early stopping on d_loss/g_loss (gan) or a
    declared figure (custom, with its mode)."""
    for name, monitor in (("gan", "g_loss"), ("custom_step", "accuracy")):
        spec = yaml.safe_load((SPECS[0].parent / f"{name}.yaml").read_text())
        spec["logging"] = {"tensorboard": True}
        spec["train"]["early_stopping"] = {"monitor": monitor, "patience": 1, "mode": "max"}
        (tmp_path / "my_steps.py").write_text((SPECS[0].parent / "my_steps.py").read_text())
        (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
        result = tfgen_here("validate", "spec.yaml", cwd=tmp_path)
        assert result.returncode == 0, result.stderr


def test_a_gan_and_a_custom_step_may_skip_non_finite_steps(tmp_path):
    """Once refused as "not yet": `train.on_nonfinite: skip` for gan and custom."""
    (tmp_path / "my_steps.py").write_text((SPECS[0].parent / "my_steps.py").read_text())
    for name in ("gan", "custom_step"):
        spec = yaml.safe_load((SPECS[0].parent / f"{name}.yaml").read_text())
        spec["train"]["on_nonfinite"] = "skip"
        (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
        result = tfgen_here("validate", "spec.yaml", cwd=tmp_path)
        assert result.returncode == 0, result.stderr


def test_a_gan_may_train_in_float16_on_one_device_and_under_mirrored(tmp_path):
    """Once refused under mirrored: each network's scaled gradients are summed over the replicas
    before its LossScaleOptimizer checks them (tests/e2e/test_gan.py trains it)."""
    spec = yaml.safe_load((SPECS[0].parent / "gan.yaml").read_text())
    spec["precision"] = "mixed_float16"
    assert _validate(tmp_path, spec).returncode == 0
    spec["strategy"] = {"type": "mirrored"}
    result = _validate(tmp_path, spec)
    assert result.returncode == 0, result.stderr
