"""Exact resume with random augmentation, on every source type (csv, tfrecord and synthetic: by
tests/generate/test_spec_space.py's drawn augmented specs): a run SIGKILLed mid-epoch and run
again ends with the uninterrupted run's history rows and final weights, bit for bit.

Each spec draws random numbers in three places: `data.train.augment` (RandomFlip and
RandomRotation on images, a word-dropping layer of the project's on text), and GaussianNoise and
Dropout in the model's step. A streamed source augments in its
tf.data pipeline, keyed by (seed, epoch, batch); an in-memory one augments in the step, its
layers' seed state in the checkpoint. `--kill-in-epoch 2` kills after the first save inside
epoch 2 (`checkpoint.every_steps`: the resumed run skips that epoch's first batches);
`--kill-after-saves 1` after epoch 1's save (`every_epochs`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, base_spec, build, read_history
from folder_data import image_spec, text_spec, write_images, write_reviews

pytestmark = pytest.mark.slow

RUNNER = ROOT / "tests" / "e2e" / "resume_runner.py"
EXAMPLES = 48  # 36 train after the held-out quarter: 9 steps of 4 an epoch
EVERY_STEPS = {"every_steps": 3, "keep": 2}
EVERY_EPOCH = {"every_epochs": 1, "keep": 2}
IMAGE_AUGMENT = [
    {"type": "RandomFlip", "mode": "horizontal"},
    {"type": "RandomRotation", "factor": 0.2},
]
# A project module: arrays and a dataset for the `python` source, and a random text augmentation.
DATA_MODULE = '''
import keras
import numpy as np
import tensorflow as tf


def images(n):
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, n)
    x = rng.integers(0, 80, (n, 8, 8, 3)).astype("uint8")
    x[np.arange(n), :, :4, labels] += 170  # the class's channel is bright on the left half
    return x, labels.astype("int32")


def image_dataset(n):
    return tf.data.Dataset.from_tensor_slices(images(n))


class WordDrop(keras.layers.Layer):
    """Drops each word with probability `rate` (training only)."""

    def __init__(self, rate=0.3, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.seed_generator = keras.random.SeedGenerator(0)

    def call(self, x, training=False):
        if not training:
            return x
        words = tf.strings.split(x)
        draws = keras.random.uniform(tf.shape(words.flat_values), seed=self.seed_generator)
        kept = tf.ragged.boolean_mask(words, words.with_flat_values(draws >= self.rate))
        return tf.strings.reduce_join(kept, axis=-1, separator=" ")

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}
'''


def image_model() -> dict:
    return {
        "inputs": {"image": {"shape": [8, 8, 3], "dtype": "uint8"}},
        "layers": [
            {"type": "Rescaling", "scale": 1 / 255},
            {"type": "GaussianNoise", "stddev": 0.05},
            {"type": "Conv2D", "filters": 4, "kernel_size": 3, "activation": "relu"},
            {"type": "Dropout", "rate": 0.2},
            {"type": "GlobalAveragePooling2D"},
        ],
        "outputs": {"label": [{"type": "Dense", "units": 3}]},
    }


def augmented_spec(source: dict, model: dict, augment: list, validation: dict | None = None, **train) -> dict:
    """Two epochs on `source`, augmented, validated on `validation` (None: a quarter held out);
    deterministic (bit-exact on CPU)."""
    held_out = {"validation": {"source": validation}} if validation else {"validation_split": 0.25}
    spec = base_spec(
        data={
            "train": {
                "source": source,
                "batch_size": 4,
                "shuffle": 64,
                "augment": augment,
                **train,
            },
            **held_out,
        },
        model=model,
        targets={"label": {"shape": [], "dtype": "int32", "classes": 3}},
        losses={"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        metrics={"label": ["SparseCategoricalAccuracy"]},
        train={"epochs": 2, "steps_per_execution": 1},
        deterministic=True,
    )
    spec["name"] = "augmented"
    return spec


def write_arrays(folder: Path) -> None:
    """The project module, and its images as npz."""
    (folder / "aug_data.py").write_text(DATA_MODULE)
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, EXAMPLES)
    images = rng.integers(0, 80, (EXAMPLES, 8, 8, 3)).astype("uint8")
    images[np.arange(EXAMPLES), :, :4, labels] += 170  # the class's channel is bright on the left half
    np.savez(folder / "images.npz", x=images, y=labels.astype("int32"))


def image_folder_spec(folder: Path, **train) -> dict:
    write_images(folder / "shapes", per_class=EXAMPLES // 3, size=(8, 8))
    spec = image_spec(folder / "shapes", size=(8, 8))
    spec["data"]["train"].update({"batch_size": 4, "augment": IMAGE_AUGMENT, **train})
    spec["model"]["layers"][1:1] = [{"type": "GaussianNoise", "stddev": 0.05}]
    spec["model"]["layers"].append({"type": "Dropout", "rate": 0.2})
    spec["train"] = {"epochs": 2, "steps_per_execution": 1}
    return spec


def text_folder_spec(folder: Path) -> dict:
    (folder / "aug_data.py").write_text(DATA_MODULE)
    write_reviews(folder / "reviews", per_class=EXAMPLES // 2)
    spec = text_spec(folder / "reviews")
    spec["data"]["train"].update({"batch_size": 4, "augment": [{"type": "aug_data:WordDrop", "rate": 0.3}]})
    spec["model"]["layers"].append({"type": "Dropout", "rate": 0.3})
    spec["train"] = {"epochs": 2, "steps_per_execution": 1}
    spec["deterministic"] = True
    return spec


def tfds_spec(folder: Path) -> dict:
    model = {
        "inputs": {"image": {"shape": [28, 28, 1], "dtype": "uint8"}},
        "layers": [
            {"type": "Rescaling", "scale": 1 / 255},
            {
                "type": "Conv2D",
                "filters": 2,
                "kernel_size": 3,
                "strides": 2,
                "activation": "relu",
            },
            {"type": "Dropout", "rate": 0.2},
            {"type": "Flatten"},
        ],
        "outputs": {"label": [{"type": "Dense", "units": 10}]},
    }
    source = {"type": "tfds", "name": "mnist", "split": "train"}
    spec = augmented_spec(source, model, IMAGE_AUGMENT)
    spec["targets"]["label"]["classes"] = 10
    del spec["data"]["validation_split"]
    spec["data"]["validation"] = {"source": {**source, "split": "test"}}
    return spec


def arrays_spec(kind: str):
    """The spec of an npz or python source (`kind`), streamed unless it names `memory`."""

    def make(folder: Path) -> dict:
        write_arrays(folder)
        python = {
            "type": "python",
            "function": "aug_data:image_dataset",
            "kwargs": {"n": EXAMPLES},
        }
        sources = {
            "npz": (
                {"type": "npz", "path": "images.npz", "x": "x", "y": "y"},
                image_model(),
                IMAGE_AUGMENT,
            ),
            "python": (python, image_model(), IMAGE_AUGMENT),
        }
        name = kind.removesuffix("_memory")
        source, model, augment = sources[name]
        # A dataset (python) cannot be split: it is validated on itself.
        validation = source if name == "python" else None
        return augmented_spec(source, model, augment, validation, in_memory=kind.endswith("_memory"))

    return make


def run(script: Path, cwd: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        str(RUNNER),
        str(script),
        "--weights",
        str(out) + ".npz",
        *options,
    ]
    return subprocess.run(
        [*command, "--", "--output-dir", str(out)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"},
        check=False,
    )


def weights(path: Path) -> list[np.ndarray]:
    with np.load(path) as saved:
        return [saved[k] for k in sorted(saved, key=lambda k: int(k.split("_")[1]))]


def without_times(rows: list[dict]) -> list[dict]:
    timed = ("epoch_seconds", "examples_per_second", "input_wait")
    return [{k: v for k, v in row.items() if k not in timed} for row in rows]


def assert_resumes_exactly(tmp_path: Path, spec: dict, kill: tuple[str, ...], *options: str) -> None:
    """The uninterrupted run, then one killed at `kill` and run again: the same rows and weights."""
    script = build(tmp_path, spec)
    straight = run(script, tmp_path, tmp_path / "straight", *options)
    assert straight.returncode == 0, straight.stderr[-3000:]
    killed = run(script, tmp_path, tmp_path / "killed", *kill, *options)
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert len(read_history(tmp_path / "killed")) == 1, "killed in epoch 2"
    resumed = run(script, tmp_path, tmp_path / "killed", *options)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    where = "(epoch 2, step 3)" if kill[0] == "--kill-in-epoch" else "(epoch 2, step 0)"
    assert "Resuming from" in resumed.stdout and where in resumed.stdout, resumed.stdout
    expected = without_times(read_history(tmp_path / "straight"))
    assert [row["epoch"] for row in expected] == [1, 2]
    assert without_times(read_history(tmp_path / "killed")) == expected
    for a, b in zip(
        weights(tmp_path / "straight.npz"),
        weights(tmp_path / "killed.npz"),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


MID_EPOCH = ("--kill-in-epoch", "2")
AFTER_EPOCH = ("--kill-after-saves", "1")


# tests/generate/test_spec_space.py kills and resumes a drawn augmented spec on a synthetic, a csv
# and a tfrecord source (the files always stream, augmented in the pipeline; killed after a save
# inside epoch 2 as here): a streamed synthetic source is npz's arrays-through-tf.data path.
# An image folder and npz in memory are resumed on two replicas below (one replica is the same
# step and pipeline with nothing to split; the cached image folder runs on one).
@pytest.mark.parametrize("kind", ["npz", "python"])
def test_an_augmented_run_killed_mid_epoch_resumes_bit_for_bit(tmp_path, kind):
    spec = arrays_spec(kind)(tmp_path)
    spec["checkpoint"] = EVERY_STEPS
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH)


def test_an_augmented_cached_image_folder_run_killed_after_an_epoch_resumes_bit_for_bit(tmp_path):
    spec = image_folder_spec(tmp_path, cache=True)
    spec["checkpoint"] = EVERY_EPOCH
    assert_resumes_exactly(tmp_path, spec, AFTER_EPOCH)


def test_an_augmented_image_folder_run_on_two_replicas_killed_mid_epoch_resumes_bit_for_bit(
    tmp_path,
):
    spec = image_folder_spec(tmp_path)
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    spec["checkpoint"] = EVERY_STEPS
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH)


def test_a_text_folder_run_augmented_by_a_custom_layer_killed_mid_epoch_resumes_bit_for_bit(
    tmp_path,
):
    spec = text_folder_spec(tmp_path)
    spec["checkpoint"] = EVERY_STEPS
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH)


def test_an_augmented_tfds_run_killed_mid_epoch_resumes_bit_for_bit(tmp_path):
    spec = tfds_spec(tmp_path)
    spec["checkpoint"] = EVERY_STEPS
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH, "--tfds-examples", str(EXAMPLES * 3 // 4))


def test_an_in_memory_run_on_two_replicas_augmenting_in_the_step_killed_mid_epoch_resumes_bit_for_bit(tmp_path):
    """With a BatchNormalization too: Keras 3 keeps its moving statistics per replica, each updated
    from its half of the batch, and a checkpoint holds the first replica's, so a resumed run
    validated unlike the one it continues; averaged over the replicas after every step
    (the runtime's average_moving_statistics), the validation figures resume bit for bit."""
    spec = arrays_spec("npz_memory")(tmp_path)
    spec["model"]["layers"].insert(-1, {"type": "BatchNormalization"})
    spec["strategy"] = {"type": "mirrored", "cpu_replicas": 2}
    spec["checkpoint"] = EVERY_STEPS
    assert_resumes_exactly(tmp_path, spec, MID_EPOCH)
