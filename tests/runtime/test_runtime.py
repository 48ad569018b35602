"""Unit tests of the runtime, runtime/tfgen_runtime/ (no training): trackers against the
Keras callbacks, history, checkpoint fallback, keep-best, the data helpers and the trainer's contract."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import Lazy, lazy_import, load_runtime, write_module

keras = lazy_import("keras")
tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def _tiny_model(accuracy=False):
    """A compiled one-unit model whose SGD optimizer has a plain float rate of 1.0.

    With `accuracy`, the compiled "accuracy" metric is built (one evaluate call), so that
    Keras's `mode="auto"` can tell that `val_accuracy` is maximised.
    """
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(learning_rate=1.0), loss="mse", metrics=["accuracy"] if accuracy else None)
    if accuracy:
        model.evaluate(np.zeros((1, 1)), np.zeros((1, 1)), verbose=0)
    return model


# --- early stopping == keras.callbacks.EarlyStopping --------------------------------------

# (monitor, options, values (None: the row lacks the monitor), whether Keras stops in it)
EARLY_STOPPING_CASES = {
    "min-val_loss": ("val_loss", {"patience": 2}, [1.0, 0.8, 0.9, 0.85, 0.7, 0.75, 0.76, 0.8, 0.6], True),
    "min-explicit": ("loss", {"patience": 1, "mode": "min"}, [3.0, 2.0, 2.5, 1.0], True),
    "max-auto-accuracy": ("val_accuracy", {"patience": 2}, [0.5, 0.6, 0.55, 0.7, 0.65, 0.68, 0.69, 0.9], True),
    "max-explicit": ("val_score", {"patience": 1, "mode": "max"}, [1.0, 2.0, 1.5, 3.0], True),
    "min_delta": ("val_loss", {"patience": 2, "min_delta": 0.05}, [1.0, 0.97, 0.9, 0.88, 0.86, 0.8, 0.79, 0.78], True),
    "min_delta-max": ("val_accuracy", {"patience": 1, "min_delta": 0.1}, [0.5, 0.65, 0.7, 0.74, 0.9], True),
    "baseline-never-beaten": (
        "val_loss",
        {"patience": 3, "baseline": 0.5},
        [0.9, 0.8, 0.7, 0.85, 0.9, 0.95, 0.6],
        True,
    ),
    "baseline-beaten": (
        "val_loss",
        {"patience": 2, "baseline": 0.5},
        [0.9, 0.6, 0.45, 0.46, 0.44, 0.5, 0.5, 0.5, 0.4],
        True,
    ),
    "baseline-max": ("val_accuracy", {"patience": 2, "baseline": 0.8}, [0.5, 0.6, 0.7, 0.75, 0.9, 0.85, 0.85], True),
    "start_from_epoch": ("val_loss", {"patience": 1, "start_from_epoch": 3}, [1.0, 2.0, 3.0, 4.0, 5.0, 4.5, 4.6], True),
    "start_from_epoch-patience0": ("val_loss", {"patience": 0, "start_from_epoch": 2}, [5.0, 6.0, 7.0, 8.0], True),
    "patience0": ("val_loss", {"patience": 0}, [1.0, 0.9, 0.95, 0.8], True),
    "patience0-flat": ("val_loss", {"patience": 0}, [1.0, 1.0], True),
    "missing-values": ("val_loss", {"patience": 2}, [1.0, None, None, 1.1, None, 1.2, 1.3], True),
    "never-stops": ("val_loss", {"patience": 3}, [1.0, 0.9, 0.95, 0.96, 0.8, 0.85, 0.7], False),
}


def _both_early_stoppings(monitor, options, accuracy=False):
    """A tiny model, Keras's EarlyStopping on it (started) and ours, with the same options."""
    model = _tiny_model(accuracy=accuracy)
    model.stop_training = False
    theirs = keras.callbacks.EarlyStopping(monitor=monitor, **options)
    theirs.set_model(model)
    theirs.on_train_begin()
    return model, theirs, rt.EarlyStopping(monitor, **options)


@pytest.mark.filterwarnings("ignore:Early stopping conditioned on metric")
@pytest.mark.parametrize("case", EARLY_STOPPING_CASES, ids=list(EARLY_STOPPING_CASES))
def test_early_stopping_equals_keras(case):
    monitor, options, values, stops = EARLY_STOPPING_CASES[case]
    model, theirs, ours = _both_early_stoppings(monitor, options, accuracy="accuracy" in monitor)

    keras_stop = ours_stop = None
    for epoch0, value in enumerate(values):
        row = {} if value is None else {monitor: value}
        best_before = theirs.best
        theirs.on_epoch_end(epoch0, dict(row))
        improved = ours.update({**row, "epoch": epoch0 + 1}, epoch0 + 1)
        where = f"{case}, epoch {epoch0 + 1}"
        assert improved == (theirs.best is not best_before), where
        assert int(ours.wait.numpy()) == theirs.wait, where
        if theirs.best is not None:
            assert float(ours.best.numpy()) == pytest.approx(float(theirs.best)), where
        if model.stop_training and keras_stop is None:
            keras_stop = epoch0 + 1
        if ours.should_stop and ours_stop is None:
            ours_stop = epoch0 + 1
        if keras_stop is not None:
            break  # the loop ends at the first stop; ours must have stopped at that epoch too
    assert ours_stop == keras_stop, f"{case}: ours stops at {ours_stop}, Keras at {keras_stop}"
    assert (keras_stop is not None) == stops  # the sequence exercises what it is meant to


def _stop_epochs(monitor, options, values):
    """The (1-based) epoch at which Keras and ours first stop (None: never)."""
    model, theirs, ours = _both_early_stoppings(monitor, options)
    keras_stop = ours_stop = None
    for epoch0, value in enumerate(values):
        theirs.on_epoch_end(epoch0, {monitor: value})
        ours.update({monitor: value}, epoch0 + 1)
        keras_stop = keras_stop or (epoch0 + 1 if model.stop_training else None)
        ours_stop = ours_stop or (epoch0 + 1 if ours.should_stop else None)
    return keras_stop, ours_stop


@pytest.mark.parametrize(
    "patience",
    [
        0,
        1,
        2,
    ],
)
def test_early_stopping_with_an_infinite_first_value_stops_when_keras_does(patience):
    """Keras never stops after the first monitored epoch (`epoch > 0`), whatever the value."""
    keras_stop, ours_stop = _stop_epochs("val_loss", {"patience": patience}, [float("inf")] * 6)
    assert ours_stop == keras_stop


# --- plateau == keras.callbacks.ReduceLROnPlateau ------------------------------------------


def _our_rate(factor, min_lr, initial=1.0):
    """The rate the optimizer uses: ScaledOnPlateau (tfgen/generate/templates/_model.py.jinja) in float32."""
    scaled = np.float32(initial) * np.float32(factor)
    return float(np.maximum(scaled, np.float32(min_lr)) if factor < 1.0 else scaled)


# (monitor, options, values (None: the row lacks the monitor))
PLATEAU_CASES = {
    "plain": ("val_loss", {"factor": 0.5, "patience": 2}, [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.85, 0.9, 0.9, 0.9]),
    "patience0": ("val_loss", {"factor": 0.5, "patience": 0}, [1.0, 1.1, 0.9, 1.0, 1.0]),
    "cooldown": (
        "val_loss",
        {"factor": 0.5, "patience": 1, "cooldown": 2},
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6],
    ),
    "cooldown-improving": (
        "val_loss",
        {"factor": 0.1, "patience": 2, "cooldown": 1},
        [1.0, 1.0, 1.0, 0.5, 0.6, 0.6, 0.4, 0.6, 0.6, 0.6],
    ),
    "min_lr": ("val_loss", {"factor": 0.5, "patience": 1, "min_lr": 0.3}, [1.0] * 8),
    "min_lr-not-a-power": ("val_loss", {"factor": 0.5, "patience": 1, "min_lr": 0.1}, [1.0] * 10),
    "min_lr-cooldown": ("val_loss", {"factor": 0.2, "patience": 1, "min_lr": 0.01, "cooldown": 1}, [1.0] * 10),
    "min_delta": (
        "val_loss",
        {"factor": 0.5, "patience": 2, "min_delta": 0.1},
        [1.0, 0.95, 0.91, 0.85, 0.80, 0.79, 0.5, 0.45, 0.44, 0.43],
    ),
    "max": ("val_score", {"factor": 0.5, "patience": 1, "mode": "max"}, [0.5, 0.6, 0.6, 0.7, 0.65, 0.65]),
    "max-auto-accuracy": (
        "val_accuracy",
        {"factor": 0.5, "patience": 1, "min_delta": 0.01},
        [0.5, 0.6, 0.605, 0.7, 0.65, 0.65],
    ),
    "missing-values": ("val_loss", {"factor": 0.5, "patience": 1}, [1.0, None, 1.0, None, 1.0, 0.5]),
}


@pytest.mark.filterwarnings("ignore:Learning rate reduction is conditioned on metric")
@pytest.mark.parametrize("case", PLATEAU_CASES, ids=list(PLATEAU_CASES))
def test_plateau_equals_keras(case):
    monitor, options, values = PLATEAU_CASES[case]
    model = _tiny_model(accuracy="accuracy" in monitor)
    theirs = keras.callbacks.ReduceLROnPlateau(monitor=monitor, **options)
    theirs.set_model(model)
    theirs.on_train_begin()
    ours = rt.ReduceOnPlateau(monitor, **options)
    min_lr = options.get("min_lr", 0.0)

    rates = []
    for epoch0, value in enumerate(values):
        row = {} if value is None else {monitor: value}
        theirs.on_epoch_end(epoch0, dict(row))
        ours.update({**row, "lr": _our_rate(float(ours.factor.numpy()), min_lr)}, epoch0 + 1)
        keras_rate = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))
        our_rate = _our_rate(float(ours.factor.numpy()), min_lr)
        assert our_rate == pytest.approx(keras_rate, rel=1e-6), f"{case}, epoch {epoch0 + 1}"
        rates.append(keras_rate)
    assert rates[-1] < 1.0  # every sequence lowers the rate at least once


def test_plateau_raw_factor_is_the_keras_rate_without_min_lr():
    """Without min_lr the rate is simply 1.0 * factor (no schedule clamp involved)."""
    model = _tiny_model()
    theirs = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1)
    theirs.set_model(model)
    theirs.on_train_begin()
    ours = rt.ReduceOnPlateau("val_loss", factor=0.5, patience=1)
    for epoch0, value in enumerate([1.0, 1.0, 0.9, 0.95, 1.0, 1.0]):
        theirs.on_epoch_end(epoch0, {"val_loss": value})
        ours.update({"val_loss": value, "lr": 1.0 * float(ours.factor.numpy())}, epoch0 + 1)
        keras_rate = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))
        assert 1.0 * float(ours.factor.numpy()) == pytest.approx(keras_rate, rel=1e-6)


@pytest.mark.parametrize(
    "min_lr",
    [
        0.25,  # exact in float32
        0.1,  # not exact in float32: Keras compares with np.float32(min_lr)
    ],
)
def test_plateau_stops_reducing_at_min_lr_as_keras_does(min_lr, capsys):
    model = _tiny_model()
    theirs = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=min_lr)
    theirs.set_model(model)
    theirs.on_train_begin()
    ours = rt.ReduceOnPlateau("val_loss", factor=0.5, patience=1, min_lr=min_lr)
    keras_reductions = our_reductions = 0
    for epoch0 in range(10):
        keras_before, factor_before = float(model.optimizer.learning_rate), float(ours.factor.numpy())
        theirs.on_epoch_end(epoch0, {"val_loss": 1.0})
        # the row's lr is the float32 rate the last step used, as the history reports it
        ours.update({"val_loss": 1.0, "lr": _our_rate(factor_before, min_lr)}, epoch0 + 1)
        keras_reductions += float(model.optimizer.learning_rate) != keras_before
        our_reductions += float(ours.factor.numpy()) != factor_before
    assert keras_reductions > 0
    assert our_reductions == keras_reductions
    assert capsys.readouterr().out.count("stopped improving") == keras_reductions


# --- history --------------------------------------------------------------------------------


def _write_history(directory, epochs):
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"epoch": e, "loss": 1.0 / e}) + "\n" for e in epochs]
    (directory / "history.jsonl").write_text("".join(lines))


def _read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_history_drops_rows_after_last_epoch_and_appends(tmp_path):
    _write_history(tmp_path / "old", [1, 2, 3, 4])
    (tmp_path / "new").mkdir()
    history = rt.History(tmp_path / "old", tmp_path / "new", last_epoch=2)
    assert [row["epoch"] for row in history.rows] == [1, 2]
    history.append({"epoch": 3, "loss": 0.25, "val_loss": float("inf")})
    rows = _read_lines(tmp_path / "new" / "history.jsonl")  # every line parses
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows == history.rows
    assert list(tmp_path.rglob("*.partial")) == []
    assert len(_read_lines(tmp_path / "old" / "history.jsonl")) == 4  # the source is only read


def test_history_resumed_in_place_rewrites_the_redone_epochs(tmp_path):
    _write_history(tmp_path, [1, 2, 3, 4])
    history = rt.History(tmp_path, tmp_path, last_epoch=2)
    history.append({"epoch": 3, "loss": 0.1})
    history.append({"epoch": 4, "loss": 0.05})
    rows = _read_lines(tmp_path / "history.jsonl")
    assert [(row["epoch"], row["loss"]) for row in rows] == [(1, 1.0), (2, 0.5), (3, 0.1), (4, 0.05)]
    assert list(tmp_path.glob("*.partial")) == []


def test_history_without_a_file_starts_empty(tmp_path):
    history = rt.History(tmp_path / "nothing", tmp_path, last_epoch=5)
    assert history.rows == []
    history.append({"epoch": 1})
    assert _read_lines(tmp_path / "history.jsonl") == [{"epoch": 1}]


def test_history_append_is_atomic(tmp_path, monkeypatch):
    """Interrupted before the rename, the previous history.jsonl is whole and unchanged."""
    _write_history(tmp_path, [1, 2])
    before = (tmp_path / "history.jsonl").read_text()
    history = rt.History(tmp_path, tmp_path, last_epoch=2)

    def interrupted(*args, **kwargs):
        raise OSError("interrupted")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", interrupted)
        patch.setattr(os, "rename", interrupted)
        with contextlib.suppress(OSError):
            history.append({"epoch": 3, "loss": 0.3})
        assert (tmp_path / "history.jsonl").read_text() == before
    history = rt.History(tmp_path, tmp_path, last_epoch=2)
    history.append({"epoch": 3, "loss": 0.3})
    assert [row["epoch"] for row in _read_lines(tmp_path / "history.jsonl")] == [1, 2, 3]
    assert list(tmp_path.glob("*.partial")) == []


# --- checkpoint fallback --------------------------------------------------------------------

IDENTITY = json.dumps({"spec_sha256": "a" * 64, "variables": []})


def restore_newest_readable(checkpoint, directory, spec_sha256="a" * 64):
    """RunCheckpoint.restore over a bare checkpoint (the state only feeds its resume line)."""
    run_checkpoint = rt.RunCheckpoint.__new__(rt.RunCheckpoint)
    run_checkpoint.checkpoint = checkpoint
    checkpoint.train_metrics = []  # none: the restore puts no metric states back
    run_checkpoint.shapes = []
    run_checkpoint.state_sha256 = None
    run_checkpoint.state = SimpleNamespace(epoch=tf.Variable(0), step_in_epoch=tf.Variable(0))
    return run_checkpoint.restore(directory, spec_sha256)


def _checkpoint(value, identity=IDENTITY):
    return tf.train.Checkpoint(v=tf.Variable(value), identity=tf.Variable(identity))


def _three_checkpoints(directory):
    checkpoint = _checkpoint(0.0)
    manager = tf.train.CheckpointManager(checkpoint, str(directory), max_to_keep=5)
    paths = []
    for value in (1.0, 2.0, 3.0):
        checkpoint.v.assign(value)
        paths.append(manager.save())
    return paths


@pytest.mark.parametrize("keep", [0.0, 0.5], ids=["emptied", "halved"])
def test_restore_newest_readable_falls_back_past_a_corrupt_checkpoint(tmp_path, capsys, keep):
    paths = _three_checkpoints(tmp_path)
    data = tmp_path / (os.path.basename(paths[2]) + ".data-00000-of-00001")
    with open(data, "r+b") as f:
        f.truncate(int(data.stat().st_size * keep))
    fresh = _checkpoint(-1.0)
    restored = restore_newest_readable(fresh, tmp_path)
    assert restored == paths[1]
    assert float(fresh.v.numpy()) == 2.0
    err = capsys.readouterr().err
    assert "warning" in err and paths[2] in err
    assert paths[1] not in err and paths[0] not in err


def test_restore_newest_readable_takes_the_newest_when_it_reads(tmp_path, capsys):
    paths = _three_checkpoints(tmp_path)
    fresh = _checkpoint(-1.0)
    assert restore_newest_readable(fresh, tmp_path) == paths[2]
    assert float(fresh.v.numpy()) == 3.0
    assert "warning" not in capsys.readouterr().err


def test_restore_newest_readable_with_none_readable(tmp_path, capsys):
    empty = _checkpoint(-1.0)
    assert restore_newest_readable(empty, tmp_path / "none") is None
    paths = _three_checkpoints(tmp_path)
    for path in paths:
        (tmp_path / (os.path.basename(path) + ".data-00000-of-00001")).write_bytes(b"")
    assert restore_newest_readable(empty, tmp_path) is None
    err = capsys.readouterr().err
    assert all(path in err for path in paths)


# --- keep best ------------------------------------------------------------------------------


def _set_weights(model, value):
    model.set_weights([np.full_like(w, value) for w in model.get_weights()])


def _weights(model):
    return np.concatenate([w.ravel() for w in model.get_weights()])


@pytest.mark.parametrize(
    "monitor, values, best_epoch",
    [("val_loss", [0.5, 0.3, 0.4, 0.35], 2), ("val_accuracy", [0.5, 0.7, 0.6, 0.7], 2), ("loss", [0.2, 0.3, 0.4], 1)],
)
def test_keep_best_writes_and_restores_the_best_epoch(tmp_path, monitor, values, best_epoch):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    keep = rt.KeepBest(model, tmp_path, monitor=monitor)
    assert not keep.restore()  # nothing written yet
    for epoch, value in enumerate(values, start=1):
        _set_weights(model, float(epoch))  # "training" changes the weights every epoch
        keep.update({"epoch": epoch, monitor: value}, epoch)
    best = tmp_path / "checkpoints" / "best"
    assert (best / "weights.index").exists()
    note = json.loads((best / "best.json").read_text())
    assert (note["epoch"], note["value"], note["monitor"]) == (best_epoch, values[best_epoch - 1], monitor)
    keep.restore()
    assert np.all(_weights(model) == best_epoch)
    # a new process: a fresh model of the same architecture reads them too
    again = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    rt.KeepBest(again, tmp_path, monitor=monitor).restore()
    assert np.all(_weights(again) == best_epoch)


def test_keep_best_ignores_rows_without_the_monitor_and_honours_min_delta(tmp_path):
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    keep = rt.KeepBest(model, tmp_path, monitor="val_loss", min_delta=0.1)
    _set_weights(model, 1.0)
    keep.update({"epoch": 1, "val_loss": 1.0}, 1)
    _set_weights(model, 2.0)
    keep.update({"epoch": 2}, 2)
    _set_weights(model, 3.0)
    keep.update({"epoch": 3, "val_loss": 0.95}, 3)  # better, but by less than min_delta
    keep.restore()
    assert np.all(_weights(model) == 1.0)
    assert json.loads((tmp_path / "checkpoints" / "best" / "best.json").read_text())["epoch"] == 1


# --- data helpers ---------------------------------------------------------------------------


def test_checked_arrays_casts_names_and_flattens_label_columns():
    fields = {"image": rt.Field((4, 2), "float32"), "label": rt.Field((), "int32", 3)}
    arrays = {"image": np.ones((5, 4, 2), np.float64), "label": np.arange(5).reshape(5, 1) % 3}
    checked = rt.checked_arrays(arrays, fields, "input")
    assert checked["image"].dtype == np.float32 and checked["image"].shape == (5, 4, 2)
    assert checked["label"].dtype == np.int32 and checked["label"].shape == (5,)
    np.testing.assert_array_equal(checked["label"], [0, 1, 2, 0, 1])
    # one array for one field is named after it
    single = rt.checked_arrays(np.zeros((5, 1), np.int64), {"label": rt.Field((), "int32", 3)}, "target")
    assert list(single) == ["label"] and single["label"].shape == (5,)
    # a declared (1,) column stays a column; None matches any length
    column = rt.checked_arrays({"y": np.zeros((5, 1))}, {"y": rt.Field((1,), "float32")}, "target")
    assert column["y"].shape == (5, 1)
    ragged = rt.checked_arrays({"t": np.zeros((5, 7), np.int64)}, {"t": rt.Field((None,), "int32")}, "input")
    assert ragged["t"].shape == (5, 7) and ragged["t"].dtype == np.int32


@pytest.mark.parametrize("array", [np.ones((5, 4, 3)), np.ones((5, 8)), np.ones((5, 4, 2, 1))])
def test_checked_arrays_rejects_a_wrong_shape_naming_the_array(array):
    fields = {"pixels": rt.Field((4, 2), "float32"), "extra": rt.Field((), "int32")}
    arrays = {"pixels": array, "extra": np.zeros(5)}
    with pytest.raises(rt.UserError, match=r"inputs\.pixels has examples of shape"):
        rt.checked_arrays(arrays, fields, "input")


def test_checked_arrays_rejects_missing_or_unnamed_arrays():
    fields = {"a": rt.Field((2,), "float32"), "b": rt.Field((2,), "float32")}
    with pytest.raises(rt.UserError, match="`b`"):
        rt.checked_arrays({"a": np.zeros((3, 2))}, fields, "input")
    with pytest.raises(rt.UserError, match="one array"):
        rt.checked_arrays(np.zeros((3, 2)), fields, "input")


def test_synthetic_arrays_are_seeded_and_respect_the_declared_fields():
    inputs = {
        "image": rt.Field((4, 4, 1), "float32"),
        "tokens": rt.Field((None,), "int32", 50),
        "raw": rt.Field((3,), "uint8"),
    }
    targets = {"label": rt.Field((), "int32", 5), "onehot": rt.Field((4,), "float32", 4), "flag": rt.Field((), "bool")}
    x, y = rt.synthetic_arrays(64, inputs, targets, seed=7)
    again_x, again_y = rt.synthetic_arrays(64, inputs, targets, seed=7)
    other_x, _ = rt.synthetic_arrays(64, inputs, targets, seed=8)
    for a, b in [*zip(x.values(), again_x.values(), strict=False), *zip(y.values(), again_y.values(), strict=False)]:
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(x["image"], other_x["image"])

    assert x["image"].shape == (64, 4, 4, 1) and x["image"].dtype == np.float32
    assert x["tokens"].dtype == np.int32 and x["tokens"].shape[0] == 64
    assert x["tokens"].min() >= 0 and x["tokens"].max() < 50
    assert x["raw"].dtype == np.uint8 and x["raw"].shape == (64, 3)
    label = y["label"]
    assert label.shape == (64,) and label.dtype == np.int32
    assert label.min() >= 0 and label.max() < 5 and len(np.unique(label)) > 1
    onehot = y["onehot"]
    assert onehot.shape == (64, 4) and onehot.dtype == np.float32
    assert set(np.unique(onehot)) <= {0.0, 1.0}
    np.testing.assert_array_equal(onehot.sum(axis=1), np.ones(64))
    assert y["flag"].dtype == bool and y["flag"].shape == (64,)
    # what the data checks accept
    rt.checked_arrays(x, inputs, "input")
    rt.checked_arrays(y, targets, "target")


@pytest.mark.parametrize("n, fraction", [(10, 0.2), (10, 0.25), (10, 0.35), (7, 0.5), (100, 0.1), (9, 0.1)])
def test_split_arrays_holds_out_a_seeded_disjoint_fraction(n, fraction):
    data = ({"x": np.arange(n)}, {"y": np.arange(n) * 10})
    (train_x, train_y), (held_x, held_y) = rt.split_arrays(data, fraction, seed=3)
    assert len(held_x["x"]) == len(held_y["y"]) == round(n * fraction)
    assert len(train_x["x"]) == len(train_y["y"]) == n - round(n * fraction)
    assert set(train_x["x"]).isdisjoint(held_x["x"])
    assert sorted([*train_x["x"], *held_x["x"]]) == list(range(n))
    np.testing.assert_array_equal(train_y["y"], train_x["x"] * 10)  # rows stay aligned
    np.testing.assert_array_equal(held_y["y"], held_x["x"] * 10)
    (again, _), (held_again, _) = rt.split_arrays(data, fraction, seed=3)
    np.testing.assert_array_equal(again["x"], train_x["x"])
    np.testing.assert_array_equal(held_again["x"], held_x["x"])


def test_split_arrays_depends_on_the_seed_and_refuses_datasets():
    data = ({"x": np.arange(100)}, {"y": np.arange(100)})
    one = rt.split_arrays(data, 0.2, seed=1)[1][0]["x"]
    two = rt.split_arrays(data, 0.2, seed=2)[1][0]["x"]
    assert set(one) != set(two)
    assert sorted(one) != list(range(20))  # shuffled, not the first rows of an ordered source
    with pytest.raises(rt.UserError, match="needs arrays, the source gave a Dataset"):
        rt.split_arrays(tf.data.Dataset.range(4), 0.5, seed=1)


def test_arrays_become_one_dataset_that_every_epochs_pipeline_starts_from():
    """A streamed run builds its pipeline each epoch: the arrays are not copied again each time."""
    arrays = ({"x": np.arange(6, dtype="float32")}, {"y": np.arange(6)})
    first = rt.as_dataset(arrays)
    assert rt.as_dataset(arrays) is first
    assert [int(y["y"]) for _, y in first] == list(range(6))
    other = ({"x": np.zeros(2, "float32")}, {"y": np.zeros(2, "int64")})
    assert rt.as_dataset(other) is not first
    assert [int(y["y"]) for _, y in rt.as_dataset(other)] == [0, 0]
    dataset = tf.data.Dataset.from_tensor_slices(arrays)
    assert rt.as_dataset(dataset) is dataset


def test_epoch_line():
    row = {
        "epoch": 3,
        "loss": 0.123456,
        "val_loss": 0.2,
        "skipped_steps": 0,
        "lr": 0.001,
        "epoch_seconds": 0.41,
        "examples_per_second": 1234.5,
    }
    assert (
        rt.epoch_line(row, 30) == "Epoch 3/30 - 0.4s - loss: 0.1235 - val_loss: 0.2000 - skipped_steps: 0 - lr: 0.001"
    )


def test_a_checkpoint_of_another_spec_is_refused_before_anything_is_restored(tmp_path):
    _three_checkpoints(tmp_path)
    fresh = _checkpoint(-1.0)
    with pytest.raises(rt.UserError, match=r"ckpt-3 is of another run \(the spec changed since\)"):
        restore_newest_readable(fresh, tmp_path, spec_sha256="b" * 64)
    assert float(fresh.v.numpy()) == -1.0


def test_a_checkpoint_of_another_model_names_the_first_changed_variable(tmp_path):
    ours = json.dumps({"spec_sha256": "a" * 64, "variables": [["dense/kernel", [10, 64]]]})
    theirs = {"spec_sha256": "a" * 64, "variables": [["dense/kernel", [10, 128]]]}
    with pytest.raises(rt.UserError, match=r"variable dense/kernel was \(10, 128\), is \(10, 64\) now"):
        rt.refuse_another_run("ckpt-1", theirs, json.loads(ours))
    rt.refuse_another_run("ckpt-1", json.loads(ours), json.loads(ours))  # the same run: no error


def test_the_checkpoint_list_is_rebuilt_from_the_files_when_the_state_file_is_garbage(tmp_path):
    paths = _three_checkpoints(tmp_path)
    (tmp_path / "checkpoint").write_text("garbage {{{")
    assert rt.checkpoint_paths(tmp_path) == paths
    fresh = _checkpoint(-1.0)
    assert restore_newest_readable(fresh, tmp_path) == paths[2]
    assert float(fresh.v.numpy()) == 3.0


def test_lossy_casts_and_labels_outside_the_classes_are_refused_naming_a_row():
    floats = {"x": rt.Field((), "uint8")}
    with pytest.raises(rt.UserError, match=r"inputs\.x: 2 values change when cast to uint8, e\.g\. 0\.5 at row 1"):
        rt.checked_arrays({"x": np.array([0.0, 0.5, 0.25])}, floats, "input")
    labels = {"y": rt.Field((), "int32", classes=10)}
    with pytest.raises(rt.UserError, match=r"targets\.y: 1 values change when cast to int32, e\.g\. 3\.7 at row 2"):
        rt.checked_arrays({"y": np.array([1.0, 2.0, 3.7])}, labels, "target")
    with pytest.raises(rt.UserError, match=r"targets\.y: 1 values change when cast to int32, e\.g\. nan at row 0"):
        rt.checked_arrays({"y": np.array([np.nan, 2.0])}, labels, "target")
    with pytest.raises(rt.UserError, match=r"targets\.y: 2 labels outside \[0, 10\), e\.g\. 12 at row 5"):
        rt.checked_arrays({"y": np.array([0, 1, 2, 3, 4, 12, -1])}, labels, "target")
    assert rt.checked_arrays({"y": np.array([1.0, 9.0])}, labels, "target")["y"].tolist() == [1, 9]


def test_inputs_and_targets_of_different_lengths_are_refused():
    with pytest.raises(rt.UserError, match=r"different numbers of rows: \{'x': 640, 'y': 600\}"):
        rt.named_examples(
            (np.zeros((640, 2)), np.zeros(600)), {"x": rt.Field((2,), "float32")}, {"y": rt.Field((), "float32")}
        )


def test_a_garbage_history_is_refused_naming_the_file_and_line(tmp_path):
    (tmp_path / "history.jsonl").write_text('{"epoch": 1, "loss": 1.0}\n{"epoch": 2, "lo')
    with pytest.raises(rt.UserError, match=r"history\.jsonl line 2 is not a history row"):
        rt.History(tmp_path, tmp_path, last_epoch=5)


# --- user modules: sys.path, then the working directory, then the spec's folder -------------


@pytest.fixture
def lookup(tmp_path, monkeypatch):
    """Folders `path` (on sys.path), `cwd` (the working directory) and `spec` (the spec's), and
    a unique module name; sys.path and sys.modules are restored afterwards."""
    import uuid

    folders = SimpleNamespace(name=f"usermod_{uuid.uuid4().hex[:8]}")
    for key in ("path", "cwd", "spec"):
        setattr(folders, key, tmp_path / key)
        getattr(folders, key).mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(folders.path)])
    monkeypatch.chdir(folders.cwd)
    yield folders
    for name in [n for n in sys.modules if n.split(".")[0] == folders.name]:
        del sys.modules[name]


@pytest.mark.parametrize("places", [("path", "cwd", "spec"), ("cwd", "spec"), ("spec",)])
def test_user_module_found_in_order_sys_path_working_directory_spec_folder(lookup, places, monkeypatch):
    if "path" in places:  # a folder on sys.path is outside the project: imported only under --trust
        monkeypatch.setattr(rt.imports, "TRUSTED", True)
    for place in places:
        write_module(getattr(lookup, place), lookup.name, f"def where():\n    return {place!r}\n")
    assert rt.function(f"{lookup.name}:where", lookup.spec, "data")() == places[0]


def test_user_module_folder_added_only_when_needed_so_its_siblings_import(lookup):
    write_module(lookup.spec, lookup.name, f"from {lookup.name}_helper import VALUE\ndef get():\n    return VALUE\n")
    write_module(lookup.spec, f"{lookup.name}_helper", "VALUE = 7\n")
    assert str(lookup.spec) not in sys.path
    assert rt.function(f"{lookup.name}:get", lookup.spec, "data")() == 7
    assert sys.path[-1] == str(lookup.spec.resolve())


def test_user_module_not_found_names_it_and_every_folder_searched(lookup):
    with pytest.raises(rt.UserError) as caught:
        rt.function(f"{lookup.name}.data:load", lookup.spec, "data")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{lookup.name}.data:load: no module {lookup.name}.data in ")
    for folder in (lookup.path, lookup.cwd, lookup.spec, Path(sys.path[0])):
        assert str(folder.resolve()) in message
    assert message.index(str(lookup.cwd)) < message.index(str(lookup.spec))


def test_user_module_that_fails_to_import_shows_its_own_error(lookup):
    write_module(lookup.cwd, lookup.name, "import no_such_dependency_xyz\n")
    with pytest.raises(
        rt.UserError, match=f"{lookup.name}:load: importing {lookup.name}: No module named 'no_such_dependency_xyz'"
    ):
        rt.function(f"{lookup.name}:load", lookup.spec, "data")


def test_user_module_raising_importerror_itself_is_not_reported_as_missing(lookup):
    write_module(lookup.spec, lookup.name, f"from {lookup.name} import nothing_here\n")  # circular
    with pytest.raises(rt.UserError, match=f"importing {lookup.name}: cannot import name 'nothing_here'"):
        rt.function(f"{lookup.name}:load", lookup.spec, "data")


def test_user_module_without_the_function_is_one_line(lookup):
    write_module(lookup.cwd, lookup.name, "load = 3\n")
    with pytest.raises(rt.UserError, match=f"^{lookup.name}:load: module {lookup.name} has no function `load`$"):
        rt.function(f"{lookup.name}:load", None, "data")


# --- the trainer's contract, the checkpoint, the run's identity -----------------------------


def test_a_misspelt_tracker_option_is_an_error_not_ignored():
    with pytest.raises(TypeError, match="start_form_epoch"):
        rt.EarlyStopping("val_loss", patience=1, start_form_epoch=2)
    with pytest.raises(TypeError, match="cool_down"):
        rt.ReduceOnPlateau("val_loss", factor=0.5, patience=1, cool_down=2)
    stopping = rt.EarlyStopping("val_loss", patience=1, baseline=0.5, start_from_epoch=2)
    assert (stopping.baseline, stopping.start_from_epoch) == (0.5, 2)


def test_standard_trainer_requires_both_steps_and_keyword_arguments():
    class OnlyTrains(rt.StandardTrainer):
        def train_step(self, features, targets):
            pass

    with pytest.raises(TypeError, match="test_step"):
        OnlyTrains(strategy=tf.distribute.get_strategy(), pipeline=None, examples_per_update=4)

    class Both(OnlyTrains):
        def test_step(self, features, targets):
            pass

    with pytest.raises(TypeError):
        Both(tf.distribute.get_strategy(), None, 4)  # keyword-only: no positional seed to misplace
    assert Both(strategy=tf.distribute.get_strategy(), pipeline=None, examples_per_update=4).seed is None


def test_use_data_names_the_attributes_a_subclass_did_not_set():
    class Partial(rt.StandardTrainer):
        def __init__(self):
            super().__init__(strategy=tf.distribute.get_strategy(), pipeline=None, examples_per_update=4)
            self.model = _tiny_model()
            self.optimizer = self.model.optimizer

        def train_step(self, features, targets):
            pass

        def test_step(self, features, targets):
            pass

    arrays = ({"x": np.zeros((8, 1), np.float32)}, {"y": np.zeros((8, 1), np.float32)})
    with pytest.raises(TypeError, match="sets no variables, state, train_metrics, validation_metrics, checkpoint"):
        Partial().use_data(arrays, "memory")


def _run_checkpoint(tmp_path, **optional):
    model = _tiny_model()
    metrics = {"loss": keras.metrics.Mean(name="loss")}
    state = rt.RunState({"y": None})
    return rt.RunCheckpoint(
        model=model, optimizer=model.optimizer, state=state, train_metrics=metrics, keep=2, **optional
    )


def _saved_keys(path):
    reader = tf.train.load_checkpoint(path)
    return {key.split("/")[0] for key in reader.get_variable_to_shape_map()}


def test_run_checkpoint_saves_the_keys_of_the_objects_it_is_given(tmp_path):
    checkpoint = _run_checkpoint(tmp_path, early_stopping=rt.EarlyStopping("val_loss", patience=1))
    checkpoint.restore(tmp_path / "none", "a" * 64)
    checkpoint.open(tmp_path / "checkpoints")
    path = checkpoint.save(1)
    assert path == checkpoint.latest
    # The optional objects not given (plateau, best_weights, ...) are not saved; random_state is empty.
    assert _saved_keys(path) == {
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "early_stopping",
        "identity",
        "model",
        "optimizer",
        "save_counter",
        "state",
        "train_metrics",
    }
    assert (
        json.loads(tf.train.load_checkpoint(path).get_tensor("identity/.ATTRIBUTES/VARIABLE_VALUE"))["spec_sha256"]
        == "a" * 64
    )
    assert checkpoint.epoch() == 0 and not checkpoint.stopped_early()
    with pytest.raises(TypeError, match="early_stoping"):
        _run_checkpoint(tmp_path, early_stoping=None)


def test_save_in_epoch_records_the_step_and_numbers_by_the_steps_run(tmp_path):
    checkpoint = _run_checkpoint(tmp_path)
    checkpoint.restore(tmp_path / "none", "a" * 64)
    checkpoint.open(tmp_path / "checkpoints")
    checkpoint.state.steps_run.assign(7)
    path = checkpoint.save_in_epoch(3)
    assert path.endswith("ckpt-7")
    assert tf.train.load_checkpoint(path).get_tensor("state/step_in_epoch/.ATTRIBUTES/VARIABLE_VALUE") == 3


def test_run_directory_records_the_made_by_it_is_given(tmp_path):
    made_by = {"spec": "specs/x.yaml", "spec_sha256": "b" * 64, "tfgen": "9.9"}
    args = rt.parse_args(["--output-dir", str(tmp_path / "run")], "doc", 1, "runs/x")
    run = rt.RunDirectory(args, tf.distribute.get_strategy(), 4, made_by=made_by)
    checkpoint = _run_checkpoint(tmp_path)
    history = run.resume(checkpoint, ["--output-dir", "run"])
    assert not history.finished and history.rows == []
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert {key: record[key] for key in made_by} == made_by and record["argv"] == ["--output-dir", "run"]
    saved = tf.train.load_checkpoint(checkpoint.save(1)).get_tensor("identity/.ATTRIBUTES/VARIABLE_VALUE")
    assert json.loads(saved)["spec_sha256"] == "b" * 64


@pytest.mark.parametrize(
    ("state", "named"),
    [
        (lambda: rt.RunState(["y"]), "loss = nan, y_loss = nan"),
        (lambda: rt.RunState(figures=["loss", "accuracy"]), "sum = nan, loss = nan, accuracy = 0.5"),
    ],
    ids=["outputs", "figures"],
)
def test_a_non_finite_step_stops_naming_each_figure_as_it_is_logged(state, named):
    """A supervised step's per-output losses are named `<output>_loss`; a custom step's figures
    as its history names them (not `loss_loss`, `accuracy_loss`), beside their sum."""
    state = state()
    carried = state.start(keras.optimizers.SGD())
    figures = [tf.constant([np.nan, np.nan]), tf.constant([0.25, 0.75])][: len(state.names) - 1]
    carried = state.record(carried, tf.constant(np.nan), dict(zip(state.names[1:], figures, strict=True)))
    state.fold(carried, keras.optimizers.SGD(), 1)
    with pytest.raises(FloatingPointError, match=rf"non-finite at step 1 \(epoch 1\): {named};"):
        state.check_finite(1, "none")
