"""The `tfds` source: TensorFlow Datasets streamed in stored order, checked and resumable.

The training runs are real processes running the generated script inside
`tfds.testing.mock_data` (offline: TFDS's own description of mnist, examples made by the test),
and the missing extra is a process in which `tensorflow_datasets` cannot be imported.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest
from conftest import base_spec, build, load_runtime, read_history, run_tfgen, tfgen_here

# Runs SCRIPT inside tfds.testing.mock_data, its examples learnable (the label is where a bright
# band lies; each split its own draw). KILL_AT > 0: the process dies right after that many
# checkpoint saves, as a SIGKILL would leave it.
MOCK_RUNNER = """
import os, runpy, sys, zlib
import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds

script, kill_at, examples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))

def learnable(builder, split, decoders=None, read_config=None, **kwargs):
    rng = np.random.default_rng(zlib.crc32(str(split).encode()))
    labels = rng.integers(0, 10, size=examples)
    images = rng.integers(0, 60, size=(examples, 28, 28, 1), dtype=np.uint8)
    for row, label in enumerate(labels):
        images[row, 2 * label : 2 * label + 3] = 220
    return tf.data.Dataset.from_tensor_slices({"image": images, "label": labels.astype(np.int64)})

if kill_at:
    import tfgen_runtime as rt
    save, saves = rt.RunCheckpoint.save, []

    def dying(self, *args):
        path = save(self, *args)
        saves.append(path)
        if len(saves) == kill_at:
            os._exit(9)
        return path

    rt.RunCheckpoint.save = dying

sys.argv = [script, *sys.argv[4:]]
with tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE, as_dataset_fn=learnable):
    runpy.run_path(script, run_name="__main__")
"""


def mnist_spec(**source):
    """An mnist-like spec reading TFDS's mnist: 80% of its train split, the rest for validation."""
    train = {"type": "tfds", "name": "mnist", "split": "train[:80%]", **source}
    validation = copy.deepcopy({**train, "split": "train[80%:]"})
    return base_spec(
        deterministic=True,
        data={
            "train": {"source": train, "batch_size": 16, "shuffle": 1024},
            "validation": {"source": validation, "batch_size": 64},
        },
        model={
            "inputs": {"image": {"shape": [28, 28, 1], "dtype": "float32"}},
            "layers": [
                {"type": "Rescaling", "scale": 1 / 255},
                {"type": "Flatten"},
                {"type": "Dense", "units": 32, "activation": "relu"},
                {"type": "Dropout", "rate": 0.2},
            ],
            "outputs": {"label": [{"type": "Dense", "units": 10}]},
        },
        targets={"label": {"shape": [], "dtype": "int32", "classes": 10}},
        losses={"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        metrics={"label": ["SparseCategoricalAccuracy"]},
        train={"epochs": 2},
        checkpoint={"every_steps": 24, "keep": 2},
    )


def blocked_tfds(folder):
    """The environment of a Python in which `import tensorflow_datasets` fails."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text("import sys\nsys.modules['tensorflow_datasets'] = None\n")
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


def spec_errors(tmp_path, spec):
    """`tfgen validate` of `spec` (written to tmp_path/small.yaml): its exit code and error lines."""
    import yaml

    (tmp_path / "small.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", "small.yaml", cwd=tmp_path)
    return result.returncode, result.stderr.splitlines()


# --- the spec (fast) ---------------------------------------------------------------------------


def test_the_script_loads_the_named_split_with_the_spec_mapping(tmp_path):
    text = build(tmp_path, mnist_spec(x="image", y={"label": "label"}, data_dir="data/tfds")).read_text()
    call = (
        "rt.load_tfds(\n"
        '            "mnist",\n'
        '            "train[:80%]",\n'
        "            INPUTS,\n"
        "            TARGETS,\n"
        '            data_dir="data/tfds",\n'
        '            x="image",\n'
        '            y={"label": "label"},\n'
        "        )\n"
    )
    assert f"        train = {call}" in text
    assert f"        validation = {call.replace('train[:80%]', 'train[80%:]')}" in text


def test_the_supervised_pair_is_the_default_and_fills_one_input_and_one_target(tmp_path):
    text = build(tmp_path, mnist_spec()).read_text()
    assert 'train = rt.load_tfds("mnist", "train[:80%]", INPUTS, TARGETS)' in text
    spec = mnist_spec()
    spec["model"]["outputs"]["other"] = [{"type": "Dense", "units": 1}]
    spec["targets"]["other"] = {"shape": [1]}
    spec["losses"]["other"] = "MeanSquaredError"
    code, errors = spec_errors(tmp_path, spec)
    assert code == 2
    assert errors[0].startswith("small.yaml:6:7: data.train.source: the dataset's supervised pair fills one input")
    assert "name each one's feature with `x` and `y`" in errors[0]


def test_x_without_y_is_a_located_error(tmp_path):
    code, errors = spec_errors(tmp_path, mnist_spec(x="image"))
    assert code == 2
    assert errors[0].startswith("small.yaml:6:7: data.train.source: ")
    assert "give both `x` and `y` (feature names), or neither" in errors[0]


def test_a_name_with_a_space_is_a_located_error(tmp_path):
    code, errors = spec_errors(tmp_path, mnist_spec(name="my mnist"))
    assert code == 2
    assert errors[0] == (
        "small.yaml:7:13: data.train.source.name: `my mnist` is not a TFDS name (it has a space): "
        "e.g. `mnist` or `glue/sst2:2.0.0`"
    )


def test_a_mapping_must_name_every_input_and_target(tmp_path):
    code, errors = spec_errors(tmp_path, mnist_spec(x={"pixels": "image"}, y="label"))
    assert code == 2
    assert errors[0] == "small.yaml:10:9: data.train.source.x: maps ['pixels'], the inputs are ['image']"


def test_validation_split_on_a_tfds_source_points_at_split_slicing(tmp_path):
    spec = mnist_spec()
    del spec["data"]["validation"]
    spec["data"]["validation_split"] = 0.2
    code, errors = spec_errors(tmp_path, spec)
    assert code == 2
    assert errors == [
        (
            "small.yaml:11:21: data.validation_split: `validation_split` needs an in-memory source; a `tfds` source "
            "streams: hold out part of a split with TFDS's slicing (`split: train[:80%]`, and `train[80%:]` as "
            "`data.validation`)"
        )
    ]


def test_in_memory_true_is_refused_for_a_streamed_tfds_source(tmp_path):
    spec = mnist_spec()
    spec["data"]["train"]["in_memory"] = True
    code, errors = spec_errors(tmp_path, spec)
    assert code == 2
    assert errors == [
        "small.yaml:11:16: data.train.in_memory: the in-memory path cannot be used: the `tfds` source streams from files"
    ]


def test_a_tfds_spec_builds_where_neither_tensorflow_nor_tfds_imports(tmp_path):
    env = blocked_tfds(tmp_path / "blocked")
    (tmp_path / "blocked" / "sitecustomize.py").write_text(
        "import sys\nfor name in ('tensorflow_datasets', 'tensorflow', 'keras'):\n    sys.modules[name] = None\n"
    )
    import yaml

    (tmp_path / "small.yaml").write_text(yaml.safe_dump(mnist_spec(), sort_keys=False))
    result = run_tfgen("build", "small.yaml", "--out", "generated", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in (tmp_path / "generated").iterdir()) == ["small.py"]


def test_smoke_without_the_extra_is_a_located_error_naming_it(tmp_path):
    import yaml

    env = blocked_tfds(tmp_path / "blocked")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(mnist_spec(), sort_keys=False))
    result = run_tfgen("smoke", "small.yaml", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        'small.yaml:6:13: data.train.source.type: a `tfds` source needs TensorFlow Datasets: pip install "tfgen[tfds]"',
        'small.yaml:13:13: data.validation.source.type: a `tfds` source needs TensorFlow Datasets: pip install "tfgen[tfds]"',
    ]


# --- the runs (slow) ---------------------------------------------------------------------------


def mock_run(script, out, *args, kill_at=0, examples=1024):
    """Run the generated `script` inside tfds.testing.mock_data (MOCK_RUNNER), in a process."""
    command = [sys.executable, "-c", MOCK_RUNNER, str(script), str(kill_at), str(examples)]
    return subprocess.run(
        [*command, "--output-dir", str(out), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )


def without_times(rows):
    return [
        {k: v for k, v in row.items() if k not in ("epoch_seconds", "examples_per_second", "input_wait")}
        for row in rows
    ]


@pytest.mark.slow
def test_an_mnist_spec_trains_on_tfds_and_a_killed_run_resumes_to_the_same_history(tmp_path):
    script = build(tmp_path, mnist_spec())
    straight = mock_run(script, tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr[-3000:]
    expected = read_history(tmp_path / "straight")
    assert [row["epoch"] for row in expected] == [1, 2]
    assert expected[-1]["val_sparse_categorical_accuracy"] >= 0.9, expected
    killed = mock_run(script, tmp_path / "killed", kill_at=2)  # at step 48 of epoch 1's 64
    assert killed.returncode == 9, killed.stderr[-3000:]
    assert not (tmp_path / "killed" / "history.jsonl").exists()
    rerun = mock_run(script, tmp_path / "killed")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "(epoch 1, step 48)" in rerun.stdout
    assert without_times(read_history(tmp_path / "killed")) == without_times(expected)


@pytest.mark.slow
def test_features_are_cast_to_the_fields_and_one_they_cannot_take_is_one_line(tmp_path):
    import tensorflow as tf
    import tensorflow_datasets as tfds

    rt = load_runtime()
    image = {"image": rt.Field((28, 28, 1), "float32")}
    label = {"label": rt.Field((), "int32", 10)}
    flat = {"image": rt.Field((784,), "float32")}
    cases = [
        (("mnist", "train", image, label), {"x": "img", "y": "label"}, "no feature `img` (it has ['image', 'label'])"),
        (
            ("mnist", "train", flat, label),
            {},
            "inputs.image has elements of shape (28, 28, 1), the spec declares (784,)",
        ),
        (
            ("mnist", "train", image, {"label": rt.Field((), "int32", 12)}),
            {},
            "`label` has 10 classes, targets.label has classes: 12",
        ),
        (
            ("mnist", "train[:80", image, label),
            {},
            "Error parsing split 'train[:80'. See format at: https://www.tensorflow.org/datasets/splits",
        ),
        (("mnsit", "train", image, label), {}, "Dataset mnsit not found."),
    ]
    text = ({"text": rt.Field((), "float32")}, {"label": rt.Field((), "int32", 2)})
    with tfds.testing.mock_data(num_examples=4, policy=tfds.testing.MockPolicy.USE_CODE):
        for (name, split, inputs, targets), options, message in cases:
            with pytest.raises(rt.UserError) as error:
                rt.load_tfds(name, split, inputs, targets, **options)
            assert str(error.value) == f"tfds {name} ({split}): {message}"
        with pytest.raises(rt.UserError) as error:
            rt.load_tfds("imdb_reviews", "test", *text)
        assert str(error.value) == (
            "tfds imdb_reviews (test): inputs.text has string elements, the spec declares float32: "
            "strings fill a `dtype: string` input or a class target that lists its names"
        )
        x, y = next(iter(rt.load_tfds("mnist", "train", image, label, x={"image": "image"}, y="label")))
        review = {"text": rt.Field((), "string")}
        text, _ = next(iter(rt.load_tfds("imdb_reviews", "test", review, text[1])))
    assert (x["image"].dtype, x["image"].shape, y["label"].dtype) == (tf.float32, (28, 28, 1), tf.int32)
    assert text["text"].dtype == tf.string  # a Text feature fills a `dtype: string` input


@pytest.mark.slow
def test_deep_validation_checks_the_name_split_features_shapes_and_classes(tmp_path):
    spec = mnist_spec(split="train[:80")
    spec["data"]["validation"]["source"].update(name="mnsit")
    spec["model"]["inputs"]["image"]["shape"] = [784]
    spec["targets"]["label"]["classes"] = 12
    spec["model"]["outputs"]["label"][0]["units"] = 12
    import yaml

    (tmp_path / "small.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", "--deep", "small.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "small.yaml:6:7: data.train.source: feature `image` is [28, 28, 1] per example; inputs.image is declared [784]",
        (
            "small.yaml:8:14: data.train.source.split: Error parsing split 'train[:80'. See format at: "
            "https://www.tensorflow.org/datasets/splits"
        ),
        "small.yaml:14:13: data.validation.source.name: no TFDS dataset `mnsit`; did you mean `mnist`?",
        "small.yaml:40:14: targets.label.classes: `mnist`'s `label` has 10 classes, not 12",
    ]
    spec = mnist_spec(x={"image": "picture"}, y="label")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("validate", "--deep", "small.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "data.train.source.x.image: `mnist` has no feature `picture` (it has image, label)" in result.stderr
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(mnist_spec(), sort_keys=False))
    assert tfgen_here("validate", "--deep", "small.yaml", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_without_the_extra_deep_validation_and_the_script_name_it_in_one_line(tmp_path):
    import yaml

    env = blocked_tfds(tmp_path / "blocked")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(mnist_spec(), sort_keys=False))
    deep = run_tfgen("validate", "--deep", "small.yaml", cwd=tmp_path, env=env)
    assert deep.returncode == 2
    assert next(line for line in deep.stderr.splitlines() if line.startswith("small.yaml")) == (
        'small.yaml:6:13: data.train.source.type: a `tfds` source needs TensorFlow Datasets: pip install "tfgen[tfds]"'
    )
    script = build(tmp_path, mnist_spec())
    result = subprocess.run(
        [sys.executable, str(script), "--output-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **env},
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("error: ")] == [
        (
            'error: a `tfds` source needs TensorFlow Datasets (pip install "tfgen[tfds]"): '
            "import of tensorflow_datasets halted; None in sys.modules"
        )
    ]
    assert not (tmp_path / "run" / "checkpoints").exists()


@pytest.mark.slow
def test_smoke_runs_a_tfds_spec_on_synthetic_data_and_resumes_it(tmp_path):
    import yaml

    (tmp_path / "small.yaml").write_text(yaml.safe_dump(mnist_spec(), sort_keys=False))
    result = run_tfgen("smoke", "small.yaml", "--steps", "3", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("PASS small.yaml (saved at epoch 1, resumed to epoch 2; ")


def offline(folder):
    """The environment of a Python with no network: every connection fails at once."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError(101, 'Network is unreachable (offline)')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
    )
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.slow
def test_a_tfds_dataset_not_downloaded_offline_is_one_line_naming_it_where_and_how_to_get_it(tmp_path):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **offline(tmp_path / "offline")}
    (tmp_path / "datasets").mkdir()
    (tmp_path / "a-file").write_text("not a folder\n")
    lines = {}
    for data_dir in ("datasets", "a-file"):
        spec = mnist_spec(data_dir=str(tmp_path / data_dir))
        script = build(tmp_path / data_dir.replace("-", "_"), spec)
        result = subprocess.run(
            [sys.executable, str(script), "--output-dir", str(tmp_path / f"run-{data_dir}")],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
        assert result.returncode == 1, result.stdout + result.stderr[-3000:]
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, result.stderr[-3000:]
        lines[data_dir] = errors[0]
    missing = lines["datasets"]
    assert missing.startswith(f"error: tfds mnist (train[:80%]): not downloaded (looked in {tmp_path}/datasets/mnist/")
    assert missing.endswith(
        "download it with `tfds build mnist --data_dir DIR` on a connected machine (or a run there), "
        "then copy DIR here and give it as `data_dir`"
    )
    assert lines["a-file"] == (
        f"error: tfds mnist (train[:80%]): data_dir {tmp_path}/a-file is not a folder of datasets "
        "(`tfds build mnist --data_dir DIR` makes one)"
    )
