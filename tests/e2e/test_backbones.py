"""`{application: ...}` backbones and `{application_preprocess: ...}`, run for real: the
preprocessing layer computes each family's `preprocess_input`, a backbone's weights come from a
`.weights.h5` or `.keras` file, and a missing file is one line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import assert_one_line_error, base_spec, unreadable_weights_files
from conftest import run_harness as _harness

from tfgen.spec import catalog
from tfgen.spec.application_preprocessing import FAMILY_MODE, preprocess_layer

pytestmark = pytest.mark.slow

MAKE_WEIGHTS = """
import sys
import numpy as np
import keras
keras.utils.set_random_seed(7)
model = keras.applications.MobileNetV3Small(
    include_top=False, weights=None, input_shape=(32, 32, 3), alpha=0.75, minimalistic=True, pooling="avg",
    name="backbone"
)
model.save_weights(sys.argv[1] + "/backbone.weights.h5")
model.save(sys.argv[1] + "/backbone.keras")
np.savez(sys.argv[1] + "/backbone.npz", *model.get_weights())
"""


def test_every_family_has_a_preprocessing_layer_that_computes_its_preprocess_input():
    import importlib

    from tfgen.check.keras_import import import_keras
    from tfgen.generate.code import keras_call

    keras = import_keras()
    families = {entry["module"]: name for name, entry in catalog.applications().items()}
    assert set(families) == set(FAMILY_MODE)
    images = np.random.default_rng(0).uniform(0, 255, (2, 5, 5, 3)).astype("float32")
    for module, application in families.items():
        made = preprocess_layer(application)
        layer = eval(keras_call({"type": made["type"], **made["args"]}, "layers"), {"keras": keras})
        expected = importlib.import_module(module).preprocess_input(images.copy())
        np.testing.assert_allclose(np.asarray(layer(images)), np.asarray(expected), rtol=1e-5, atol=1e-4)


def _spec(weights):
    return base_spec(
        data={
            "train": {"source": {"type": "synthetic", "examples": 32}, "batch_size": 16},
            "validation": {"source": {"type": "synthetic", "examples": 16}},
        },
        model={
            "inputs": {"image": {"shape": [32, 32, 3]}},
            "layers": [
                {"application_preprocess": "MobileNetV2"},
                {
                    "application": "MobileNetV2",
                    "weights": weights,
                    "name": "backbone",
                    "trainable": False,
                    "alpha": 0.35,
                    "pooling": "avg",
                },
            ],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        train={"epochs": 1},
    )


def _small(spec):
    """`spec` with MobileNetV3Small (minimalistic) as its backbone: fewer layers to trace than
    MobileNetV2 (the trained backbones here; the one-line errors keep MobileNetV2)."""
    spec["model"]["layers"][0] = {"application_preprocess": "MobileNetV3Small"}
    spec["model"]["layers"][1] |= {"application": "MobileNetV3Small", "alpha": 0.75, "minimalistic": True}
    return spec


def test_a_backbone_starts_from_its_weights_file_and_stays_there_when_not_trainable(build_spec, tmp_path):
    subprocess.run([sys.executable, "-c", MAKE_WEIGHTS, str(tmp_path)], check=True, capture_output=True)
    with np.load(tmp_path / "backbone.npz") as saved:
        stored = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    for name in ("backbone.weights.h5", "backbone.keras"):
        script = build_spec(_small(_spec(str(tmp_path / name))), stem="from_" + name.split(".")[1])
        initial, final, _, _ = _harness(script, tmp_path, f"run-{name}")
        for a, b, c in zip(stored, initial[:-2], final[:-2], strict=True):  # all but the head's kernel and bias
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)
        assert not np.array_equal(initial[-2], final[-2])  # the head trains


def test_a_missing_weights_file_is_one_line(build_spec, tmp_path):
    script = build_spec(_spec("missing.weights.h5"))
    line = assert_one_line_error(_run(script, tmp_path))
    assert line == "error: the backbone's weights file missing.weights.h5 does not exist"


def _run(script, tmp_path, env=None) -> subprocess.CompletedProcess:
    """The script run in `tmp_path` (with `env` added to the environment)."""
    return subprocess.run(
        [sys.executable, str(script), "--output-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _error_line(script, tmp_path, env=None) -> str:
    result = _run(script, tmp_path, env)
    assert "Warning" not in result.stderr, result.stderr
    return assert_one_line_error(result)


def test_imagenet_weights_that_cannot_be_downloaded_are_one_line_naming_the_cache_and_the_ways_out(
    build_spec, tmp_path
):
    script = build_spec(_spec("imagenet"))
    # Offline on any machine: every download goes to a proxy that refuses connections.
    offline = {"KERAS_HOME": str(tmp_path / "keras"), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": ""}
    line = _error_line(script, tmp_path, offline)
    assert line.startswith(
        "error: the imagenet weights of MobileNetV2 could not be downloaded (URL fetch failure on "
        "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
    ), line
    assert line.endswith(
        f"; Keras caches them in {tmp_path / 'keras' / 'models'} (KERAS_HOME sets the folder): copy the file "
        "there, give `weights:` the path of a .weights.h5 or .keras file, or set `weights: null`"
    ), line


@pytest.mark.parametrize("name", ["garbage.keras", "weightless.keras", "garbage.weights.h5"])
def test_a_weights_file_that_cannot_be_read_is_one_line_naming_it(build_spec, tmp_path, name):
    expected = unreadable_weights_files(tmp_path)
    assert _error_line(build_spec(_spec(name)), tmp_path) == f"error: {expected[name]}"


def test_a_backbone_frozen_in_phase_one_trains_in_phase_two_under_mirrored(build_spec, tmp_path):
    spec = _small(_spec(None))
    spec["model"]["layers"][1].pop("trainable")
    spec["strategy"] = {"type": "mirrored"}
    spec["train"] = {"epochs": 2, "phases": [{"epochs": 1, "frozen": ["backbone"]}, {"epochs": 1}]}
    script = build_spec(spec)
    # Tracing the backward pass through the backbone on two replicas takes minutes on 2 shared cores.
    initial, after_one, history, _ = _harness(script, tmp_path, "one", "--epochs", "1", cpus=2, timeout=900)
    for a, b in zip(initial[:-2], after_one[:-2], strict=True):  # the backbone's weights and statistics
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(initial[-2], after_one[-2])  # the head trains on both replicas' batches
    _, after_two, history, out = _harness(script, tmp_path, "one", cpus=2, timeout=900)  # resumes into phase 2
    assert "Resuming from" in out and [row["phase"] for row in history] == [1, 2]
    changed = [not np.array_equal(a, b) for a, b in zip(after_one[:-2], after_two[:-2], strict=True)]
    assert sum(changed) > len(changed) // 2, "phase 2 trained too little of the backbone"
