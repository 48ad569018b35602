"""Multi-task weighting, optimisation control and the pitfall guards: each executed, its effect asserted."""

from __future__ import annotations

import ast
import sys

import numpy as np
import pytest
from conftest import ROOT, base_spec, lazy_import, load_module, read_history
from conftest import replica_independent_spec as _spec
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow
tf = lazy_import("tensorflow")


def _initial_weights(module):
    import keras

    keras.utils.set_random_seed(module.SEED)  # as main() does before building the model
    return module.build_model().get_weights()


def _final_weights(out):
    import keras

    return keras.models.load_model(out / "model.keras").get_weights()


def _global_norm(arrays):
    return float(np.sqrt(sum(np.sum(np.square(a)) for a in arrays)))


def test_global_norm_clipping_bounds_the_applied_update(build_spec, tmp_path):
    spec = _spec(
        optimizer={"type": "SGD", "learning_rate": 1.0}, train={"epochs": 1, "gradient_clipping": {"global_norm": 0.01}}
    )
    module = load_module(build_spec(spec))
    initial = _initial_weights(module)
    module.main(["--output-dir", str(tmp_path / "run"), "--steps-per-epoch", "1"])
    update = [b - a for a, b in zip(initial, _final_weights(tmp_path / "run"), strict=False)]
    assert _global_norm(update) == pytest.approx(0.01, rel=1e-4)  # lr 1: the update is the clipped gradient
    unclipped = load_module(
        build_spec(_spec(optimizer={"type": "SGD", "learning_rate": 1.0}, train={"epochs": 1}), stem="free")
    )
    unclipped.main(["--output-dir", str(tmp_path / "free"), "--steps-per-epoch", "1"])
    assert _global_norm([b - a for a, b in zip(initial, _final_weights(tmp_path / "free"), strict=False)]) > 0.05


@pytest.mark.parametrize("clip", [{"norm": 0.005}, {"value": 0.001}])
def test_per_tensor_clipping(build_spec, tmp_path, clip):
    spec = _spec(optimizer={"type": "SGD", "learning_rate": 1.0}, train={"epochs": 1, "gradient_clipping": clip})
    module = load_module(build_spec(spec))
    initial = _initial_weights(module)
    module.main(["--output-dir", str(tmp_path / "run"), "--steps-per-epoch", "1"])
    for a, b in zip(initial, _final_weights(tmp_path / "run"), strict=False):
        if "norm" in clip:
            assert np.linalg.norm(b - a) <= 0.005 * (1 + 1e-5)
        else:
            assert np.abs(b - a).max() <= 0.001 * (1 + 1e-5)


def test_global_norm_clipping_is_the_same_on_two_replicas(build_spec, tmp_path):
    clip = {"epochs": 1, "gradient_clipping": {"global_norm": 0.05}}
    one = build_spec(_spec(train=clip), stem="one")
    two = build_spec(_spec(train=clip, strategy={"type": "mirrored"}), stem="two")
    _, w1, _, _ = _harness(one, tmp_path, "one", "--steps-per-epoch", "3", cpus=2)
    _, w2, _, _ = _harness(two, tmp_path, "two", "--steps-per-epoch", "3", cpus=2)
    for a, b in zip(w1, w2, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_gradient_accumulation_equals_one_larger_batch(build_spec, tmp_path):
    small = _spec(train={"epochs": 1, "gradient_accumulation_steps": 4})
    small["data"]["train"]["batch_size"] = 8
    large = _spec(train={"epochs": 1})
    results = []
    for stem, spec in (("small", small), ("large", large)):
        module = load_module(build_spec(spec, stem=stem))
        module.main(["--output-dir", str(tmp_path / stem), "--steps-per-epoch", "2"])
        results.append(_final_weights(tmp_path / stem))
    for a, b in zip(*results, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def _two_task_spec(weighting, **extra):
    spec = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "two_tasks:load"}, "batch_size": 32},
            "validation_split": 0.25,
        },
        model={
            "inputs": {"features": {"shape": [8]}},
            "layers": [{"type": "Dense", "units": 16, "activation": "relu"}],
            "outputs": {"big": [{"type": "Dense", "units": 1}], "small": [{"type": "Dense", "units": 1}]},
        },
        targets={"big": {"shape": [1]}, "small": {"shape": [1]}},
        losses={"big": "MeanSquaredError", "small": "MeanSquaredError"},
        metrics={},
        loss_weighting=weighting,
        train={"epochs": 3, **extra},
    )
    return spec


@pytest.fixture
def two_tasks(tmp_path, monkeypatch):
    (tmp_path / "two_tasks.py").write_text(
        "import numpy as np\n\n"
        "def load():\n"
        "    rng = np.random.default_rng(0)\n"
        "    x = rng.random((256, 8)).astype('float32')\n"
        "    return {'features': x}, {'big': 100 * rng.standard_normal((256, 1)), 'small': rng.random((256, 1))}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    # Each test writes its own two_tasks.py: the next one must import its own, not this one.
    sys.modules.pop("two_tasks", None)


def _train_step_sources(script: str) -> dict[str, str]:
    """The source of `Trainer.train_step` and of the script's own functions and methods it calls.

    Followed one call deep: module-level functions, Trainer's methods, and methods of the
    script's classes held as `self.<attribute> = SomeClass(...)` (for example the loss weighting).
    """
    tree = ast.parse(script)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "Trainer" in classes, f"the generated script defines no class Trainer (classes: {sorted(classes)})"

    def methods(cls):
        return {node.name: node for node in cls.body if isinstance(node, ast.FunctionDef)}

    trainer = methods(classes["Trainer"])
    assert "train_step" in trainer, f"class Trainer defines no train_step (methods: {sorted(trainer)})"
    held = {}  # self.<attribute> -> the script's class it holds
    for node in ast.walk(classes["Trainer"]):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            for target in node.targets:
                if (
                    node.value.func.id in classes
                    and isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    held[target.attr] = classes[node.value.func.id]
    found = {"Trainer.train_step": trainer["train_step"]}
    for call in ast.walk(trainer["train_step"]):
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name) and func.id in functions:
            found[func.id] = functions[func.id]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            if func.attr in trainer:
                found[f"Trainer.{func.attr}"] = trainer[func.attr]
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == "self"
            and func.value.attr in held
        ):
            cls = held[func.value.attr]
            if func.attr in methods(cls):
                found[f"{cls.name}.{func.attr}"] = methods(cls)[func.attr]
    return {name: ast.get_source_segment(script, node) for name, node in found.items()}


def test_ema_ratio_weights_move_toward_the_task_with_the_larger_loss(build_spec, tmp_path, two_tasks):
    module = load_module(build_spec(_two_task_spec({"type": "ema_ratio", "decay": 0.9})))
    history = module.main(["--output-dir", str(tmp_path / "run")])
    last = history[-1]
    assert last["big_loss_weight"] > 1.9 and last["small_loss_weight"] < 0.1
    assert last["big_loss_weight"] + last["small_loss_weight"] == pytest.approx(2.0, rel=1e-5)
    # No host round trip in the compiled step: neither in it nor in the script's code it calls.
    for name, source in _train_step_sources(module.__loader__.get_source(module.__name__)).items():
        assert "numpy" not in source, f"{name} (run inside the compiled train step) uses numpy:\n{source}"


def test_uncertainty_log_variances_train_and_are_restored(build_spec, tmp_path, two_tasks):
    module = load_module(build_spec(_two_task_spec({"type": "uncertainty"})))
    straight = module.main(["--output-dir", str(tmp_path / "straight"), "--epochs", "3"])
    assert straight[-1]["big_loss_weight"] != pytest.approx(1.0, abs=1e-3)  # the variances trained
    reader = tf.train.load_checkpoint(str(tmp_path / "straight" / "checkpoints"))
    # The log-variances are checkpointed (saved once, under the first path that reaches them).
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    names = {child.local_name for node in graph.nodes for child in node.children}
    assert {"weighting", "log_variances", "big", "small"} <= names
    module.main(["--output-dir", str(tmp_path / "resumed"), "--epochs", "2"])
    resumed = module.main(["--output-dir", str(tmp_path / "resumed"), "--epochs", "3"])
    # No shuffle, no dropout: a resumed run ends exactly where the straight one does.
    assert resumed[-1]["big_loss_weight"] == straight[-1]["big_loss_weight"]
    assert resumed[-1]["loss"] == straight[-1]["loss"]


def test_none_gradient_error_names_the_variable(build_spec, tmp_path, monkeypatch):
    (tmp_path / "spare_model.py").write_text(
        "import keras\n\n"
        "class Spare(keras.Model):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.used = keras.layers.Dense(3, name='used')\n"
        "        self.spare = keras.layers.Dense(2, name='spare')\n"
        "        self.spare.build((None, 8))\n\n"
        "    def call(self, inputs):\n"
        "        return {'label': self.used(inputs['features'])}\n\n"
        "def build():\n"
        "    model = Spare()\n"
        "    model({'features': keras.ops.zeros((1, 8))})\n"
        "    return model\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = base_spec(model={"inputs": {"features": {"shape": [8]}}, "builder": "spare_model:build"})
    module = load_module(build_spec(spec))
    with pytest.raises(ValueError, match=r"no gradient reaches spare/kernel, spare/bias"):
        module.main(["--output-dir", str(tmp_path / "run"), "--epochs", "1"])
    allowed = load_module(build_spec({**spec, "train": {"epochs": 1, "allow_unused_variables": True}}, stem="allowed"))
    assert len(allowed.main(["--output-dir", str(tmp_path / "ok")])) == 1


@pytest.fixture
def nan_data(tmp_path, monkeypatch):
    (tmp_path / "nan_data.py").write_text(
        "import numpy as np\n\n"
        "def load():\n"
        "    rng = np.random.default_rng(0)\n"
        "    x = rng.random((128, 8)).astype('float32')\n"
        "    x[70] = 1e4  # row 70, in the third batch of 32: finite data, but exp() of it overflows\n"
        "    return {'features': x}, {'label': rng.integers(0, 3, 128)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nan_data", raising=False)  # this test's module, not an earlier one's
    spec = _spec()
    spec["data"] = {"train": {"source": {"type": "python", "function": "nan_data:load"}, "batch_size": 32}}
    spec["model"]["layers"] = [{"type": "Dense", "units": 16, "activation": "exponential"}]
    return spec


# XLA carries the NaN to the loss. Off XLA (`auto` in a run this short) it depends on the CPU's
# kernels: where relu(NaN) is 0 the loss stays finite and the NaN update is found in the weights
# after the running steps; where the NaN reaches the loss, the loss check names step 3. Both stop.
@pytest.mark.parametrize(
    "jit,message",
    [
        (True, r"non-finite at step 3 \(epoch 1\): loss = nan"),
        ("auto", r"weights became non-finite in steps 1-4 of epoch 1|loss became non-finite at step 3 \(epoch 1\)"),
    ],
)
def test_nonfinite_stop_names_the_step_and_keeps_the_last_good_checkpoint(build_spec, tmp_path, nan_data, jit, message):
    module = load_module(build_spec({**nan_data, "train": {**nan_data.get("train", {}), "jit_compile": jit}}))
    with pytest.raises(FloatingPointError, match=message):
        module.main(["--output-dir", str(tmp_path / "run")])
    assert not (tmp_path / "run" / "checkpoints" / "checkpoint").exists()
    assert not (tmp_path / "run" / "history.jsonl").exists()


def test_nonfinite_skip_skips_and_counts(build_spec, tmp_path, nan_data):
    spec = {**nan_data, "train": {"epochs": 2, "on_nonfinite": "skip"}}
    module = load_module(build_spec(spec))
    initial = _initial_weights(module)
    history = module.main(["--output-dir", str(tmp_path / "run")])
    assert [row["skipped_steps"] for row in history] == [1, 2]
    final = _final_weights(tmp_path / "run")
    assert all(np.isfinite(w).all() for w in final)
    assert any(not np.array_equal(a, b) for a, b in zip(initial, final, strict=False))


def test_check_numerics_names_the_bad_tensor(build_spec, tmp_path, nan_data):
    module = load_module(build_spec({**nan_data, "debug": {"check_numerics": True}}))
    assert "jit_compile=True" not in (tmp_path / "generated" / "small.py").read_text()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"(loss|gradient of \S+) : Tensor had (NaN|Inf) values"):
        module.main(["--output-dir", str(tmp_path / "run")])


def test_reduce_on_plateau_lowers_the_rate_after_patience_flat_epochs(build_spec, tmp_path):
    spec = _spec(
        optimizer={"type": "SGD", "learning_rate": 1e-9},
        train={"epochs": 6, "reduce_on_plateau": {"monitor": "loss", "factor": 0.5, "patience": 2, "min_delta": 1.0}},
    )
    history = load_module(build_spec(spec)).main(["--output-dir", str(tmp_path / "run")])
    # Epoch 1 sets the best; epochs 2 and 3 are flat: the rate halves from epoch 4 on, then again from 6.
    assert [row["lr"] for row in history] == pytest.approx([1e-9, 1e-9, 1e-9, 5e-10, 5e-10, 2.5e-10])


def test_warmup_then_the_schedule(build_spec, tmp_path):
    spec = _spec(
        optimizer={
            "type": "SGD",
            "learning_rate": {
                "type": "ExponentialDecay",
                "initial_learning_rate": 0.1,
                "decay_steps": 8,
                "decay_rate": 0.5,
            },
        },
        train={"epochs": 3, "warmup": {"steps": 8, "initial": 0.0}, "steps_per_execution": 1},
    )
    history = load_module(build_spec(spec)).main(["--output-dir", str(tmp_path / "run")])
    # 8 steps an epoch; `lr` is each epoch's last step: warming (7/8 of 0.1), then the decay from step 8.
    assert [row["lr"] for row in history] == pytest.approx([0.1 * 7 / 8, 0.1 * 0.5 ** (7 / 8), 0.1 * 0.5 ** (15 / 8)])


def test_validation_every_and_validation_steps(build_spec, tmp_path):
    spec = _spec(
        train={
            "epochs": 5,
            "validation_every": 2,
            "validation_steps": 1,
            "early_stopping": {"monitor": "val_loss", "patience": 5},
        }
    )
    history = load_module(build_spec(spec)).main(["--output-dir", str(tmp_path / "run")])
    assert ["val_loss" in row for row in history] == [False, True, False, True, True]


def test_early_stopping_baseline_min_delta_and_start_from_epoch_match_keras(build_spec, tmp_path):
    import keras

    config = {"monitor": "loss", "patience": 2, "baseline": -1.0, "start_from_epoch": 3, "min_delta": 10.0}
    history = load_module(build_spec(_spec(train={"epochs": 12, "early_stopping": config}))).main(
        ["--output-dir", str(tmp_path / "run")]
    )
    callback = keras.callbacks.EarlyStopping(**config)
    callback.set_model(keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)]))
    callback.model.stop_training = False
    callback.on_train_begin()
    for epoch, row in enumerate(history):
        callback.on_epoch_end(epoch, {"loss": row["loss"]})
        if callback.model.stop_training:
            break
    assert callback.model.stop_training and epoch + 1 == len(history) == 5


def test_sequences_spec_buckets_and_pads_variable_length_examples(tmp_path):
    module = load_module(ROOT / "generated" / "sequences.py")
    train_ds, validation_ds = module.build_datasets()
    widths = {int(f["tokens"].shape[1]) for f, _ in train_ds.take(40)}
    sizes = {int(f["tokens"].shape[0]) for f, _ in train_ds.take(40)}
    assert len(widths) > 3 and sizes <= {64, 32, 16} and len(sizes) > 1
    features, _ = next(iter(validation_ds))
    assert features["tokens"].shape[0] == 64 and (features["tokens"].numpy() == 0).any()  # padded with 0
    history = module.main(["--output-dir", str(tmp_path / "run"), "--epochs", "3"])
    assert history[-1]["val_sparse_categorical_accuracy"] > 0.9


def test_multitask_spec_runs(tmp_path):
    history = load_module(ROOT / "generated" / "multitask.py").main(
        ["--output-dir", str(tmp_path / "run"), "--epochs", "2"]
    )
    assert {"label_loss", "mask_loss", "label_loss_weight", "mask_loss_weight", "val_mask_binary_accuracy"} <= set(
        history[-1]
    )
    assert read_history(tmp_path / "run") == history
