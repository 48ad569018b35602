"""Strategies, precision and the fast paths, run for real on CPU (subprocesses where TF state is global)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, base_spec, load_module
from conftest import replica_independent_spec as _spec
from conftest import run_harness as _harness

pytestmark = pytest.mark.slow


def test_two_replicas_match_one_device_and_both_data_paths(build_spec, tmp_path):
    one = build_spec(_spec(), stem="one")
    two = build_spec(_spec(strategy={"type": "mirrored"}), stem="two")
    two_stream = build_spec(
        _spec(
            strategy={"type": "mirrored"},
            data={**_spec()["data"], "train": {**_spec()["data"]["train"], "in_memory": False}},
        ),
        stem="two_stream",
    )
    _, w1, h1, _ = _harness(one, tmp_path, "one", "--epochs", "2", cpus=2)
    _, w2, h2, out2 = _harness(two, tmp_path, "two", "--epochs", "2", cpus=2)
    _, w3, h3, _ = _harness(two_stream, tmp_path, "three", "--epochs", "2", cpus=2)
    assert "2 replica(s): global batch 32, 16 per replica" in out2
    for history in (h2, h3):
        assert [r["loss"] for r in history] == pytest.approx([r["loss"] for r in h1], rel=1e-5)
        assert [r["val_loss"] for r in history] == pytest.approx([r["val_loss"] for r in h1], rel=1e-5)
    for weights in (w2, w3):
        for a, b in zip(w1, weights, strict=False):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("precision", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_trains(build_spec, tmp_path, precision):
    script = build_spec(base_spec(precision=precision, train={"epochs": 4}), stem=precision)
    text = script.read_text()
    assert 'dtype="float32"' in text.split("def build_model")[1].split("def build_optimizer")[0]
    assert ("LossScaleOptimizer" in text) == (precision == "mixed_float16")
    _, _, history, _ = _harness(script, tmp_path, precision, "--epochs", "4")
    assert history[-1]["loss"] < history[0]["loss"]
    if precision == "mixed_float16":
        assert history[0]["loss_scale"] > 0 and history[-1]["skipped_steps"] == 0


def test_float16_skips_a_non_finite_step_on_every_replica(build_spec, tmp_path):
    """A finite loss whose scaled float16 gradients overflow on replica 1 only: no weight may change
    on any replica (Keras 3.15 checks one replica's gradients)."""
    (tmp_path / "planted_data.py").write_text(
        "import numpy as np\n\n"
        "def load():\n"
        "    rng = np.random.default_rng(0)\n"
        "    x = rng.random((64, 8)).astype('float32')\n"
        "    x[20, 3] = 1e4  # batch 0 rows 16..31 go to replica 1; x * scaled grads overflow float16\n"
        "    return {'features': x}, {'label': rng.integers(0, 3, 64)}\n"
    )
    spec = _spec(precision="mixed_float16", strategy={"type": "mirrored"})
    spec["data"] = {"train": {"source": {"type": "python", "function": "planted_data:load"}, "batch_size": 32}}
    spec["metrics"] = {}
    script = build_spec(spec, stem="planted")
    initial, final, history, _ = _harness(
        script,
        tmp_path,
        "planted",
        "--epochs",
        "1",
        "--steps-per-epoch",
        "1",
        cpus=2,
        env={"PYTHONPATH": str(tmp_path)},
    )
    for a, b in zip(initial, final, strict=False):
        np.testing.assert_array_equal(a, b)
    assert history[0]["skipped_steps"] == 1
    assert history[0]["loss_scale"] == 2.0**14  # halved from Keras's initial 2**15


def test_steps_per_execution_gives_the_same_weights_as_one_step(build_spec, tmp_path):
    import keras

    weights = []
    for n in (1, 3):
        spec = base_spec(train={"epochs": 2, "steps_per_execution": n})
        module = load_module(build_spec(spec, stem=f"spe{n}"))
        module.main(["--output-dir", str(tmp_path / f"spe{n}")])
        weights.append(keras.models.load_model(tmp_path / f"spe{n}" / "model.keras").get_weights())
    for a, b in zip(*weights, strict=False):
        np.testing.assert_array_equal(a, b)


def test_jit_compile_true_runs_on_one_device(build_spec, tmp_path):
    script = build_spec(base_spec(train={"epochs": 2, "jit_compile": True}), stem="jit")
    assert "@tf.function(jit_compile=True, autograph=False)\n    def train_step" in script.read_text()
    history = load_module(script).main(["--output-dir", str(tmp_path / "jit")])
    assert history[-1]["loss"] < history[0]["loss"]


def test_in_memory_path_equals_the_tf_data_path_on_unshuffled_data(build_spec, tmp_path):
    import keras

    weights = []
    for in_memory in (True, False):
        spec = _spec()
        spec["data"]["train"]["in_memory"] = in_memory
        script = build_spec(spec, stem=f"mem{in_memory}")
        placement = '"memory"' if in_memory else '"stream"'
        assert f"trainer.use_data(train, {placement}" in script.read_text()
        load_module(script).main(["--output-dir", str(tmp_path / f"m{in_memory}"), "--epochs", "2"])
        weights.append(keras.models.load_model(tmp_path / f"m{in_memory}" / "model.keras").get_weights())
    for a, b in zip(*weights, strict=False):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_cifar_spec_runs_mirrored_in_mixed_precision_on_synthetic_data(tmp_path):
    # What is tested is the loop, not oneDNN's float16 kernels: on an Intel CPU with AVX-512 FP16
    # they ran this 10x slower (292 s alone against 29 s without them), past the timeout in a
    # full suite. A user's mixed_float16 on such a CPU pays that too (the README says so).
    _, _, history, out = _harness(
        ROOT / "generated" / "cifar.py",
        tmp_path,
        "cifar",
        "--synthetic",
        "--epochs",
        "2",
        "--steps-per-epoch",  # 2: the warmup's rate rises from one epoch's end to the next
        "2",
        "--max-examples",  # validated on 1 batch of 256, not the 1,024 synthetic examples' 4
        "256",
        cpus=2,
        env={"TF_ENABLE_ONEDNN_OPTS": "0"},
    )
    assert "2 replica(s): global batch 128, 64 per replica" in out
    assert [row["epoch"] for row in history] == [1, 2]
    assert all(np.isfinite(row["loss"]) and row["loss_scale"] > 0 for row in history)
    # Warmup: the rate rises during the first steps.
    assert 0 < history[0]["lr"] < history[1]["lr"] < 0.1


@pytest.mark.gpu
def test_cifar_on_a_gpu_compiles_the_step_and_trains_in_float16(tmp_path):
    """On a GPU, `jit_compile: auto` compiles the convolutional step and float16 runs fast."""
    _, _, history, _out = _harness(ROOT / "generated" / "cifar.py", tmp_path, "gpu", "--synthetic", "--epochs", "2")
    assert history[-1]["loss"] < history[0]["loss"]
    assert all(row["loss_scale"] > 0 for row in history)
