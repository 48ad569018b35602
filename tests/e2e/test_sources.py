"""Every data source and pipeline option, built from a spec and executed."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import base_spec, load_module, read_history

pytestmark = pytest.mark.slow


def _run(module, tmp_path, *extra):
    return module.main(["--output-dir", str(tmp_path / "run"), *extra])


def test_tfrecord_source_with_feature_description(build_spec, tmp_path):
    import tensorflow as tf

    rng = np.random.default_rng(0)
    path = tmp_path / "train.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(96):
            features = rng.random(8).astype("float32")
            label = int(features[0] > 0.5)
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "features": tf.train.Feature(float_list=tf.train.FloatList(value=features)),
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                        "ignored": tf.train.Feature(int64_list=tf.train.Int64List(value=[7])),
                    }
                )
            )
            writer.write(example.SerializeToString())
    source = {
        "type": "tfrecord",
        "files": str(tmp_path / "*.tfrecord"),
        "features": {"features": {"shape": [8]}, "label": {"shape": [], "dtype": "int64"}},
    }
    spec = base_spec(
        data={"train": {"source": source, "batch_size": 16, "cache": True}, "validation": {"source": source}}
    )
    module = load_module(build_spec(spec))
    train_ds, _ = module.build_datasets()
    features, targets = next(iter(train_ds))
    assert features["features"].shape == (16, 8) and targets["label"].dtype == tf.int32
    history = _run(module, tmp_path, "--epochs", "2")
    assert len(history) == 2 and history[0]["val_loss"] > 0


def test_python_source_returning_a_dataset_and_dicts(build_spec, tmp_path, monkeypatch):
    (tmp_path / "my_data.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\n"
        "def arrays(n):\n"
        "    rng = np.random.default_rng(0)\n"
        "    return {'features': rng.random((n, 8))}, {'label': rng.integers(0, 3, n)}\n\n"
        "def dataset(n):\n"
        "    x, y = arrays(n)\n"
        "    return tf.data.Dataset.from_tensor_slices((x['features'].astype('float32'), y['label'].astype('int32')))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = base_spec(
        data={
            "train": {
                "source": {"type": "python", "function": "my_data:arrays", "kwargs": {"n": 128}},
                "batch_size": 32,
            },
            "validation": {"source": {"type": "python", "function": "my_data:dataset", "kwargs": {"n": 40}}},
        }
    )
    module = load_module(build_spec(spec))
    train_ds, validation_ds = module.build_datasets()
    assert sum(1 for _ in train_ds) == 4
    assert sum(int(t["label"].shape[0]) for _, t in validation_ds) == 40
    assert len(_run(module, tmp_path, "--epochs", "1")) == 1


def test_npz_with_a_key_per_name_and_shape_check(build_spec, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", feats=rng.random((64, 8)), labels=rng.integers(0, 3, 64), wrong=rng.random((64, 5)))
    monkeypatch.chdir(tmp_path)
    source = {"type": "npz", "path": "d.npz", "x": {"features": "feats"}, "y": {"label": "labels"}}
    module = load_module(build_spec(base_spec(data={"train": {"source": source, "batch_size": 16}})))
    assert len(_run(module, tmp_path, "--epochs", "1")) == 1
    bad = {**source, "x": {"features": "wrong"}}
    module = load_module(build_spec(base_spec(data={"train": {"source": bad, "batch_size": 16}}), stem="bad"))
    with pytest.raises(
        module.rt.UserError, match=r"d\.npz: inputs\.features has examples of shape \(5,\), the spec declares \(8,\)"
    ):
        module.build_datasets()


def test_preprocess_applies_everywhere_and_augment_to_training_only(build_spec, tmp_path):
    spec = base_spec()
    spec["model"]["inputs"] = {"image": {"shape": [8, 8, 1]}}
    spec["model"]["layers"] = [{"type": "Flatten"}, {"type": "Dense", "units": 8}]
    spec["data"]["train"]["preprocess"] = [{"type": "Rescaling", "scale": 10.0}]
    spec["data"]["train"]["augment"] = [{"type": "RandomFlip", "mode": "horizontal", "seed": 3}]
    spec["data"]["train"].pop("shuffle")
    module = load_module(build_spec(spec))
    train_ds, validation_ds = module.build_datasets(synthetic=True)
    raw_train = module.rt.synthetic_arrays(256, module.INPUTS, module.TARGETS, seed=1)
    raw_validation = module.rt.synthetic_arrays(64, module.INPUTS, module.TARGETS, seed=2)
    validation_batch = next(iter(validation_ds))[0]["image"].numpy()
    np.testing.assert_allclose(validation_batch, raw_validation[0]["image"][:32] * 10.0, rtol=1e-6)
    flipped = 0
    for i, (features, _) in enumerate(train_ds):
        batch = features["image"].numpy()
        raw = raw_train[0]["image"][i * 32 : (i + 1) * 32] * 10.0
        same = np.isclose(batch, raw).all(axis=(1, 2, 3))
        mirrored = np.isclose(batch, raw[:, :, ::-1]).all(axis=(1, 2, 3))
        assert (same | mirrored).all()
        flipped += int((~same).sum())
    assert flipped > 0
    assert len(_run(module, tmp_path, "--synthetic", "--epochs", "1")) == 1


def test_builder_model_and_two_outputs_with_weights(build_spec, tmp_path, monkeypatch):
    (tmp_path / "my_models.py").write_text(
        "import keras\n\n"
        "def build(width):\n"
        "    a = keras.Input((4,), name='a')\n"
        "    b = keras.Input((2,), name='b')\n"
        "    h = keras.layers.Dense(width, activation='relu')(keras.layers.Concatenate()([a, b]))\n"
        "    return keras.Model({'a': a, 'b': b}, {'kind': keras.layers.Dense(2)(h), 'size': keras.layers.Dense(1)(h)})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = base_spec(
        model={
            "inputs": {"a": {"shape": [4]}, "b": {"shape": [2]}},
            "builder": "my_models:build",
            "kwargs": {"width": 8},
        },
        targets={"kind": {"dtype": "int32", "classes": 2}, "size": {"shape": [1]}},
        losses={
            "kind": {"type": "SparseCategoricalCrossentropy", "from_logits": True},
            "size": {"type": "MeanSquaredError", "weight": 0.5},
        },
        metrics={"kind": ["SparseCategoricalAccuracy"], "size": ["MeanAbsoluteError"]},
    )
    module = load_module(build_spec(spec))
    history = _run(module, tmp_path, "--epochs", "2")
    row = history[-1]
    assert {
        "kind_loss",
        "size_loss",
        "kind_sparse_categorical_accuracy",
        "size_mean_absolute_error",
        "val_kind_loss",
        "val_size_loss",
    } <= set(row)
    # The total is the weighted sum of the heads' losses (no regularizers in this model).
    assert row["val_loss"] == pytest.approx(row["val_kind_loss"] + 0.5 * row["val_size_loss"], rel=1e-5)
    assert read_history(tmp_path / "run") == history


def test_mask_target_loss_is_averaged_per_example(build_spec, tmp_path):
    """A loss on a rank-3 target equals Keras's own mean reduction (not a sum over pixels)."""
    import keras

    spec = base_spec(
        model={
            "inputs": {"image": {"shape": [8, 8, 3]}},
            "layers": [{"type": "Conv2D", "filters": 4, "kernel_size": 3, "padding": "same"}],
            "outputs": {"mask": [{"type": "Conv2D", "filters": 1, "kernel_size": 1}]},
        },
        targets={"mask": {"shape": [8, 8, 1], "classes": 2}},
        losses={"mask": {"type": "BinaryCrossentropy", "from_logits": True}},
        metrics={},
    )
    module = load_module(build_spec(spec))
    history = _run(module, tmp_path, "--epochs", "1")
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    _, validation_ds = module.build_datasets()
    keras_loss = keras.losses.BinaryCrossentropy(from_logits=True)
    values = [float(keras_loss(t["mask"], model(x)["mask"])) * int(t["mask"].shape[0]) for x, t in validation_ds]
    assert history[0]["val_loss"] == pytest.approx(sum(values) / 64, rel=1e-5)
