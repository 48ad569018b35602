"""`cache: <file>` keeps a tf.data cache file only for the spec and data it was made of: a cache
of other data (the source changed, or the spec) is removed and made again, never served."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import Lazy, lazy_import, load_runtime, read_history

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def arrays(value):
    return {"x": np.full((6, 2), value, "float32")}, {"y": np.arange(6, dtype="int32")}


def through_cache(data, filename, state="spec-1"):
    """The examples of `data` read through `rt.cached` to `filename` (the cache is written)."""
    ds = rt.cached(rt.as_dataset(data), data, str(filename), state, [])
    return [float(x["x"][0]) for x, _ in ds.as_numpy_iterator()]


def test_a_cache_file_of_other_data_is_made_again_not_served(tmp_path, capsys):
    filename = tmp_path / "cache" / "train"
    assert through_cache(arrays(1.0), filename) == [1.0] * 6
    assert (tmp_path / "cache" / "train.index").exists()
    # Without its check tf.data would serve the first cache's 1.0s: the data is 2.0 now.
    assert through_cache(arrays(2.0), filename) == [2.0] * 6
    assert "cache/train: a cache of other data (or of another spec's): made again" in capsys.readouterr().out
    assert through_cache(arrays(2.0), filename) == [2.0] * 6  # the same data: the cache is kept
    assert "made again" not in capsys.readouterr().out


def test_a_cache_file_of_another_spec_or_of_no_record_is_made_again(tmp_path, capsys):
    filename = tmp_path / "train"
    (tmp_path / "train.csv").write_text("a,b\n")  # beside the cache, not a part of it
    through_cache(arrays(1.0), filename)
    assert through_cache(arrays(1.0), filename, state="spec-2") == [1.0] * 6
    assert "made again" in capsys.readouterr().out
    (tmp_path / "train.source").unlink()  # a cache tfgen did not record (an older run's)
    through_cache(arrays(1.0), filename, state="spec-2")
    assert "made again" in capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "train.csv",
        "train.data-00000-of-00001",
        "train.index",
        "train.source",
    ]


@pytest.mark.slow
def test_a_new_run_on_a_changed_csv_trains_on_the_new_rows_not_its_cache(build_spec, tmp_path):
    def write(scale):
        rng = np.random.default_rng(0)
        rows = [f"{a:.4f},{b:.4f},{scale * (a + b):.4f}" for a, b in rng.random((256, 2))]
        (tmp_path / "houses.csv").write_text("\n".join(["a,b,price", *rows]) + "\n")

    source = {"type": "csv", "path": "houses.csv", "x": ["a", "b"], "y": "price"}
    spec = {
        "name": "small",
        "seed": 1,
        "deterministic": True,
        "data": {"train": {"source": source, "batch_size": 32, "cache": "cache/train"}, "validation_split": 0.25},
        "model": {
            "inputs": {"features": {"shape": [2]}},
            "layers": [{"type": "Dense", "units": 8}],
            "outputs": {"price": [{"type": "Dense", "units": 1}]},
        },
        "targets": {"price": {"shape": [1]}},
        "losses": {"price": "MeanSquaredError"},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 1},
    }
    script = build_spec(spec)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}

    def run(folder):
        command = [sys.executable, str(script), "--output-dir", str(tmp_path / folder)]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env, check=False
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout, read_history(tmp_path / folder)[-1]

    (tmp_path / "cache").mkdir()
    write(1.0)
    run("first")
    write(1000.0)  # prices 1000 times higher: a new run in a new folder
    out, changed = run("second")
    assert "cache/train: a cache of other data (or of another spec's): made again" in out
    (tmp_path / "cache" / "train.source").unlink()
    for path in (tmp_path / "cache").iterdir():
        path.unlink()
    _, uncached = run("third")  # the same data, no cache at all before it
    assert changed["loss"] == uncached["loss"] and changed["val_loss"] == uncached["val_loss"]
    assert changed["val_loss"] > 1000  # the new prices' scale, not the first run's cached rows
