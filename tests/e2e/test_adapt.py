"""Adapted preprocessing (`adapt` on a layer entry) and the tabular example spec.

The slow tests run generated scripts in real processes: the statistics are fitted once, on
training batches only, live in the model's checkpoint (a resume never adapts again), and come out
the same on the in-memory path, the tf.data path and under MirroredStrategy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import ROOT, build, load_module, load_runtime, local_workers, read_history

from tfgen.generate.decisions import Jit, resolve_jit
from tfgen.generate.plan import make_view
from tfgen.spec.models import Spec

RUNNER = ROOT / "tests" / "e2e" / "adapt_runner.py"
TABULAR = yaml.safe_load((ROOT / "specs" / "tabular.yaml").read_text())


def _view(layers=None, outputs=None, **overrides):
    """The planner's view of the tabular spec with these trunk layers (and outputs), other sections overridden."""
    model = {
        **TABULAR["model"],
        **({"layers": layers} if layers is not None else {}),
        **({"outputs": outputs} if outputs else {}),
    }
    return make_view(
        Spec.model_validate(dict(TABULAR, model=model, **overrides)), spec_path="x.yaml", spec_sha256="0", version="0"
    )


def test_adapted_layers_are_named_and_listed_with_their_batches():
    view = _view(
        [
            {"type": "Normalization", "adapt": True},
            {"type": "Normalization", "adapt": {"batches": 3}},
            {"type": "Normalization", "name": "scale", "adapt": {"batches": 5}},
            {"type": "Dense", "units": 4},
        ],
        {"benign": [{"type": "Normalization", "adapt": True}, {"type": "Dense", "units": 1}]},
    )
    assert view.model.adapted == {
        "adapted_normalization": 64,
        "adapted_normalization_2": 3,
        "scale": 5,
        "adapted_normalization_3": 64,
    }
    codes = [line.code for line in view.model.trunk]
    assert codes[:3] == [
        "keras.layers.Normalization(name='adapted_normalization')",
        "keras.layers.Normalization(name='adapted_normalization_2')",
        "keras.layers.Normalization(name='scale')",
    ]
    assert "adapt" not in codes[3]


def test_under_mixed_precision_adapted_layers_compute_in_float32():
    view = _view(precision="mixed_float16")
    assert view.model.trunk[0].code == "keras.layers.Normalization(name='adapted_normalization', dtype='float32')"
    assert "dtype" not in view.model.trunk[1].code  # the other layers follow the policy


def test_a_spec_without_adapt_has_no_adaptation_code():
    view = _view([{"type": "Normalization", "mean": 0.0, "variance": 1.0}])
    assert view.model.adapted == {}
    source = (ROOT / "generated" / "digits.py").read_text()
    assert "ADAPT_BATCHES" not in source and "adapt(trainer" not in source


def _run(script, report, *argv, cpus=1, kill_after=None):
    command = [sys.executable, str(RUNNER), str(script), str(report), "--cpus", str(cpus)]
    command += ["--kill-after-saves", str(kill_after)] if kill_after else []
    return subprocess.run(
        [*command, "--", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def _build(tmp_path, stem, overrides):
    """The tabular spec, named `stem`, with top-level sections overridden, built into tmp_path."""
    return build(tmp_path, {**TABULAR, "name": stem, **overrides}, stem)


@pytest.mark.slow
def test_tabular_reaches_logistic_regression_on_the_same_split(tmp_path):
    """generated/tabular.py, in a real process, against scikit-learn's LogisticRegression on the
    same stratified split with a StandardScaler fit on the training part."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "generated" / "tabular.py"), "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Adapted adapted_normalization on 14 training batches" in result.stdout
    ours = read_history(tmp_path)[-1]["val_accuracy"]

    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rt = load_runtime()
    x, y = load_breast_cancer(return_X_y=True)
    split = TABULAR["data"]["validation_split"]
    (train_x, train_y), (val_x, val_y) = [
        (p[0]["x"], p[1]["y"]) for p in rt.split_arrays(({"x": x}, {"y": y}), split, TABULAR["seed"], stratify=True)
    ]
    assert abs(val_y.mean() - y.mean()) < 0.01  # stratified: the same share of each class
    again = rt.split_arrays(({"x": x}, {"y": y}), split, TABULAR["seed"], stratify=True)[1][1]["y"]
    other = rt.split_arrays(({"x": x}, {"y": y}), split, TABULAR["seed"] + 1, stratify=True)[1][0]["x"]
    assert np.array_equal(again, val_y) and not np.array_equal(other, val_x)  # seeded
    scaler = StandardScaler().fit(train_x)
    theirs = (
        LogisticRegression(max_iter=1000).fit(scaler.transform(train_x), train_y).score(scaler.transform(val_x), val_y)
    )
    print(f"validation accuracy: tfgen {ours:.4f}, LogisticRegression {theirs:.4f} ({len(val_y)} examples)")
    assert ours >= theirs - 0.01, (ours, theirs)


@pytest.mark.slow
def test_build_model_alone_gives_an_unadapted_working_model():
    """The documented module API: `build_model()` needs no data; the layer starts at mean 0, variance 1."""
    tabular = load_module(ROOT / "generated" / "tabular.py")
    model = tabular.build_model()
    layer = model.get_layer("adapted_normalization")
    assert not layer.adapt_mean.numpy().any() and (layer.adapt_variance.numpy() == 1).all()
    features = np.linspace(0, 1, 60, dtype="float32").reshape(2, 30)
    assert model({"measurements": features})["benign"].shape == (2, 1)


@pytest.mark.slow
def test_adapted_once_on_training_batches_and_a_killed_run_resumes_without_adapting(tmp_path):
    overrides = {"deterministic": True, "train": {"epochs": 3}, "checkpoint": {"every_steps": 10, "keep": 2}}
    script = _build(tmp_path, "resumable", overrides)
    straight = _run(script, tmp_path / "straight.json", "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    expected = json.loads((tmp_path / "straight.json").read_text())
    assert expected["adapt_calls"] == ["adapted_normalization"]
    # The statistics are those of the training batches: none of them is a validation row.
    np.testing.assert_allclose(expected["mean"], expected["seen_mean"], rtol=1e-4)
    np.testing.assert_allclose(expected["variance"], expected["seen_variance"], rtol=1e-3)
    np.testing.assert_allclose(expected["applied_mean"], expected["mean"])
    assert expected["seen_rows_in_validation"] == 0
    assert not np.allclose(expected["mean"], expected["validation_mean"], rtol=1e-3)

    out = tmp_path / "killed"
    killed = _run(script, tmp_path / "killed.json", "--output-dir", str(out), kill_after=2)
    assert killed.returncode == -9, killed.stderr[-3000:]
    resumed = _run(script, tmp_path / "resumed.json", "--output-dir", str(out))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "Adapted" not in resumed.stdout
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert report["adapt_calls"] == []  # restored from the checkpoint, never adapted again
    assert report["mean"] == expected["mean"] and report["variance"] == expected["variance"]
    assert report["applied_mean"] == expected["applied_mean"]  # `call` uses the restored values
    assert report["weights_bytes"] == expected["weights_bytes"]  # bit-identical to the uninterrupted run


@pytest.mark.slow
def test_tf_data_path_under_mirrored_strategy_in_float16_adapts_once_on_the_training_batches(tmp_path):
    data = {**TABULAR["data"], "train": {**TABULAR["data"]["train"], "in_memory": False}}
    overrides = {"train": {"epochs": 1}, "data": data, "strategy": {"type": "mirrored"}, "precision": "mixed_float16"}
    script = _build(tmp_path, "stream", overrides)
    result = _run(script, tmp_path / "stream.json", "--output-dir", str(tmp_path / "stream"), cpus=2)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "2 replica(s)" in result.stdout and result.stdout.count("Adapted adapted_normalization") == 1
    report = json.loads((tmp_path / "stream.json").read_text())
    assert report["adapt_calls"] == ["adapted_normalization"]
    np.testing.assert_allclose(report["mean"], report["seen_mean"], rtol=1e-4)
    np.testing.assert_allclose(report["variance"], report["seen_variance"], rtol=1e-3)
    assert report["seen_rows_in_validation"] == 0


@pytest.mark.slow
def test_a_deeper_layer_adapts_on_what_reaches_it_unaugmented_and_on_n_batches(tmp_path):
    """Rescaling(2x + 1) before the adapted layer; x1000 as augmentation (it must not be seen); 5 batches of 14."""
    model = {
        **TABULAR["model"],
        "layers": [
            {"type": "Rescaling", "scale": 2.0, "offset": 1.0},
            {"type": "Normalization", "adapt": {"batches": 5}},
        ],
    }
    data = {
        **TABULAR["data"],
        "train": {**TABULAR["data"]["train"], "augment": [{"type": "Rescaling", "scale": 1000.0}]},
    }
    script = _build(tmp_path, "deeper", {"train": {"epochs": 1}, "model": model, "data": data})
    result = _run(script, tmp_path / "deeper.json", "--output-dir", str(tmp_path / "deeper"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Adapted adapted_normalization on 5 training batches" in result.stdout
    report = json.loads((tmp_path / "deeper.json").read_text())
    seen_mean, seen_variance = np.array(report["seen_mean"]), np.array(report["seen_variance"])
    np.testing.assert_allclose(report["mean"], 2 * seen_mean + 1, rtol=1e-4)
    np.testing.assert_allclose(report["variance"], 4 * seen_variance, rtol=1e-3)


@pytest.mark.slow
def test_multi_worker_workers_each_adapt_once_to_the_same_statistics(tmp_path):
    """Two MultiWorkerMirroredStrategy processes: each adapts once, on the same (unsharded) batches."""
    script = _build(
        tmp_path,
        "workers",
        {"train": {"epochs": 1}, "strategy": {"type": "multi_worker_mirrored", "communication": "ring"}},
    )
    for index in range(2):
        (tmp_path / f"tmp{index}").mkdir()
    command = lambda index: [
        sys.executable,
        str(RUNNER),
        str(script),
        str(tmp_path / f"worker{index}.json"),
        "--",
        "--output-dir",
        str(tmp_path / "run"),
    ]
    env = lambda index: {"TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp_path / f"tmp{index}")}
    with local_workers(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as processes:
        outs = [p.communicate(timeout=240) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err[-2000:] for _, err in outs]
    reports = [json.loads((tmp_path / f"worker{i}.json").read_text()) for i in range(2)]
    assert [r["adapt_calls"] for r in reports] == [["adapted_normalization"]] * 2
    assert reports[0]["mean"] == reports[1]["mean"] and reports[0]["variance"] == reports[1]["variance"]
    np.testing.assert_allclose(reports[0]["mean"], reports[0]["seen_mean"], rtol=1e-4)
    assert reports[0]["weights_bytes"] == reports[1]["weights_bytes"]  # the replicas stayed in sync


CHAINED = [
    {"type": "Normalization", "adapt": True},
    {"type": "Discretization", "num_bins": 8, "adapt": {"batches": 6}},  # on standardised values
    {"type": "IntegerLookup", "adapt": True},  # on the bin indices; 8 tokens + 1 out-of-vocabulary index
    {"type": "Embedding", "input_dim": 9, "output_dim": 2},
    "Flatten",
    {"type": "Dense", "units": 8, "activation": "relu"},
]


def test_layers_that_learn_outside_variables_get_a_checkpointed_copy():
    view = _view(CHAINED)
    assert view.model.kept_outside and not _view(TABULAR["model"]["layers"]).model.kept_outside
    assert list(view.model.adapted) == ["adapted_normalization", "adapted_discretization", "adapted_integer_lookup"]
    mixed = _view(CHAINED, precision="mixed_float16")
    assert [line.code.endswith("dtype='float32')") for line in mixed.model.trunk[:3]] == [True, True, False]
    # XLA cannot compile IntegerLookup's hash table: `jit_compile: auto` is off with one.
    assert resolve_jit(Spec.model_validate(dict(TABULAR, model={**TABULAR["model"], "layers": CHAINED}))) is Jit.OFF
    assert resolve_jit(Spec.model_validate(TABULAR)) is Jit.LONG  # without one: compiled in long runs


def _killable(layers) -> dict:
    """Overrides of the tabular spec for a deterministic 2-epoch run of `layers`, saved every 10
    steps (so a kill lands mid-run)."""
    return {
        "deterministic": True,
        "train": {"epochs": 2},
        "checkpoint": {"every_steps": 10, "keep": 2},
        "model": {**TABULAR["model"], "layers": layers},
    }


@pytest.mark.slow
def test_boundaries_and_vocabulary_survive_a_kill_and_are_never_adapted_again(tmp_path):
    """Discretization's bin boundaries and IntegerLookup's vocabulary live outside Keras variables:
    the script keeps a copy in the checkpoint. A killed run resumes with the same ones (no second
    adapt), ends bit-identical to the uninterrupted run, and its model.keras holds them."""
    overrides = _killable(CHAINED)
    script = _build(tmp_path, "chained", overrides)
    assert "self.adapted = kept_outside(self.model)" in script.read_text()
    straight = _run(script, tmp_path / "straight.json", "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert "Adapted adapted_discretization on 6 training batches" in straight.stdout
    assert "Adapted adapted_integer_lookup on 14 training batches" in straight.stdout
    expected = json.loads((tmp_path / "straight.json").read_text())
    assert expected["adapt_calls"] == ["adapted_normalization", "adapted_discretization", "adapted_integer_lookup"]
    learned = expected["learned"]
    assert len(learned["adapted_discretization"]) == 7 and len(learned["adapted_integer_lookup"]) == 9
    # Fitted on what reaches each layer of the first training batches, never on validation rows.
    np.testing.assert_allclose(
        learned["adapted_discretization"], expected["seen_learned"]["adapted_discretization"], rtol=1e-5, atol=1e-6
    )
    assert learned["adapted_integer_lookup"] == expected["seen_learned"]["adapted_integer_lookup"]
    assert learned["adapted_discretization"] != expected["validation_learned"]["adapted_discretization"]
    assert expected["exported"] == learned  # model.keras holds them

    out = tmp_path / "killed"
    killed = _run(script, tmp_path / "killed.json", "--output-dir", str(out), kill_after=2)
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert not (out / "model.keras").exists()
    resumed = _run(script, tmp_path / "resumed.json", "--output-dir", str(out))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "Adapted" not in resumed.stdout
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert report["adapt_calls"] == []
    assert report["learned"] == learned and report["exported"] == learned  # the same boundaries and vocabulary
    assert report["weights_bytes"] == expected["weights_bytes"]  # bit-identical to the uninterrupted run


# A multi_hot lookup with neither `max_tokens` nor `pad_to_max_tokens`: its width is its vocabulary's size.
WIDENED = [*CHAINED[:2], {"type": "IntegerLookup", "adapt": True, "output_mode": "multi_hot"}, CHAINED[-1]]


@pytest.mark.slow
def test_an_adapted_multi_hot_lookup_without_max_tokens_trains_and_resumes_with_its_vocabulary_width(tmp_path):
    """Keras's own pattern (adapt, then build) needs no `max_tokens`: the script finds the
    vocabulary's size before it builds the model, run.json records it, and a killed run
    builds the same model from it, resuming bit-identically without adapting."""
    overrides = _killable(WIDENED)
    script = _build(tmp_path, "widened", overrides)
    straight = _run(script, tmp_path / "straight.json", "--output-dir", str(tmp_path / "straight"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert "adapted_integer_lookup: a vocabulary of 9 (its output width)" in straight.stdout  # 8 bins + 1 OOV
    expected = json.loads((tmp_path / "straight.json").read_text())
    assert expected["learned"]["adapted_integer_lookup"] == expected["seen_learned"]["adapted_integer_lookup"]
    assert json.loads((tmp_path / "straight" / "run.json").read_text())["vocabulary_sizes"] == {
        "adapted_integer_lookup": 9
    }
    assert 9 * 8 * 4 * 2 in {len(w) for w in expected["weights_bytes"]}  # the Dense kernel: 9 x 8 float32, in hex

    out = tmp_path / "killed"
    killed = _run(script, tmp_path / "killed.json", "--output-dir", str(out), kill_after=2)
    assert killed.returncode == -9, killed.stderr[-3000:]
    resumed = _run(script, tmp_path / "resumed.json", "--output-dir", str(out))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming from" in resumed.stdout and "a vocabulary of" not in resumed.stdout  # run.json's size
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert report["adapt_calls"] == [] and report["learned"] == expected["learned"]
    assert report["weights_bytes"] == expected["weights_bytes"]  # bit-identical to the uninterrupted run


@pytest.mark.slow
def test_under_mirrored_strategy_on_tf_data_a_resumed_run_puts_boundaries_and_vocabulary_back(tmp_path):
    data = {**TABULAR["data"], "train": {**TABULAR["data"]["train"], "in_memory": False}}
    overrides = {
        "train": {"epochs": 1},
        "checkpoint": {"every_steps": 5, "keep": 2},
        "data": data,
        "strategy": {"type": "mirrored"},
        "model": {**TABULAR["model"], "layers": CHAINED},
    }
    script, out = _build(tmp_path, "mirrored", overrides), tmp_path / "run"
    killed = _run(script, tmp_path / "killed.json", "--output-dir", str(out), cpus=2, kill_after=2)
    assert killed.returncode == -9 and killed.stdout.count("Adapted") == 3, killed.stderr[-3000:]
    resumed = _run(script, tmp_path / "resumed.json", "--output-dir", str(out), cpus=2)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "2 replica(s)" in resumed.stdout and "Resuming from" in resumed.stdout and "Adapted" not in resumed.stdout
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert report["adapt_calls"] == []
    assert report["learned"]["adapted_integer_lookup"] == report["seen_learned"]["adapted_integer_lookup"]
    np.testing.assert_allclose(
        report["learned"]["adapted_discretization"],
        report["seen_learned"]["adapted_discretization"],
        rtol=1e-5,
        atol=1e-6,
    )
    assert report["exported"] == report["learned"]
