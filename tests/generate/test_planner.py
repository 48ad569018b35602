"""The planner's decisions (a typed view, one sub-view per feature), and names that cannot clash."""

from __future__ import annotations

import numpy as np
import yaml
from conftest import ROOT, base_spec, load_module

from tfgen.generate.decisions import Jit, Placement
from tfgen.generate.plan import make_view
from tfgen.generate.views import Batching, ClipKind, Clipping, LossTotal, StrategyKind, TrackerArgs, Weighting
from tfgen.paths import display_path
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate


def view_of(name):
    path = ROOT / "specs" / f"{name}.yaml"
    return make_view(validate(resolve(path, display_path(path), [])), spec_path="x", spec_sha256="0" * 64, version="0")


def test_digits_view():
    v = view_of("digits")
    assert (v.data.placement, v.step.jit, v.step.weighting) == (Placement.AUTO, Jit.LONG, Weighting.UNIT)
    assert v.distribution.kind is StrategyKind.DEFAULT and v.precision.policy is None
    assert v.data.split == 0.2 and v.data.batching is Batching.BATCH
    assert v.trackers.early_stopping == TrackerArgs("'val_loss'", {"patience": "5"}) and v.trackers.restore_best


def test_cifar_view():
    v = view_of("cifar")
    assert v.data.placement is Placement.STREAM  # in_memory: false in the spec
    assert v.precision.loss_scaling and v.precision.compute_dtype == "float16"
    assert v.step.jit is Jit.OFF  # XLA under MirroredStrategy failed on CPU devices (tfgen/generate/decisions.py)
    assert v.distribution.multi_replica and v.data.augment_in_step is False
    assert v.optimizer.learning_rate.startswith("keras.optimizers.schedules.CosineDecay(")


def test_multitask_and_sequences_views():
    multitask, sequences = view_of("multitask"), view_of("sequences")
    assert multitask.step.weighting is Weighting.UNCERTAINTY and multitask.step.weighting_module
    assert multitask.step.clipping == Clipping(ClipKind.GLOBAL_NORM, 1.0)
    assert multitask.step.loss_total is LossTotal.LEARNED and not multitask.step.updates_weighting
    assert [o.mean_per_example for o in multitask.model.outputs] == [False, True]
    assert sequences.data.batching is Batching.BUCKETED and sequences.step.jit is Jit.OFF
    assert sequences.step.variable_batches and sequences.data.validation_padded is not None


def test_a_data_module_named_like_a_script_function_does_not_shadow_it(build_spec, tmp_path, monkeypatch):
    """Issue 10's bug: `load_data:get` validated, built, and `def load_data` shadowed the import."""
    (tmp_path / "load_data.py").write_text(
        "import numpy as np\n\n\ndef get():\n    return np.ones((64, 8), 'float32'), np.arange(64) % 3\n"
    )
    spec = base_spec()
    spec["data"] = {
        "train": {"source": {"type": "python", "function": "load_data:get"}, "batch_size": 32},
        "validation_split": 0.25,
    }
    script = build_spec(spec)
    assert "import load_data" not in script.read_text()
    monkeypatch.syspath_prepend(str(tmp_path))
    (train_x, train_y), (validation_x, _) = load_module(script).load_data()
    assert train_x["features"].shape == (48, 8) and validation_x["features"].shape == (16, 8)
    assert set(np.unique(train_y["label"])) <= {0, 1, 2}


def test_the_resolved_spec_is_not_repeated_in_the_script():
    text = (ROOT / "generated" / "digits.py").read_text()
    assert "SPEC = " not in text and "import yaml" not in text
    assert yaml.safe_load((ROOT / "specs" / "digits.yaml").read_text())["name"] == "digits"
