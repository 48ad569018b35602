"""`predict` and `evaluate` on a finished run, as a user runs them: the generated script's
commands and `tfgen predict/evaluate RUN_DIR DATA`, in real processes, on one trained run per
source type (a CSV, an image folder). The CSV run is trained in a fresh interpreter, so its
stderr also shows what a start prints."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, base_spec, build, read_history
from folder_data import image_spec, write_images

pytestmark = pytest.mark.slow
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
STARTUP_MARKS = ("absl::InitializeLog", "port.cc:", "cudart_stub.cc:")
HOUSES_COLUMNS = ["sqft", "bedrooms", "age", "city", "price"]


def run(*command, cwd, env=ENV, fresh=False):
    """`python [-u] ...` in `cwd` (`fresh`: an interpreter option, so not the tests' zygote)."""
    python = [sys.executable, "-u"] if fresh else [sys.executable]
    return subprocess.run(
        [*python, *command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def tfgen(*args, cwd):
    return run("-m", "tfgen", *args, cwd=cwd)


def one_error_line(result, *phrases, code=1):
    assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if "error: " in line]
    assert len(errors) == 1, result.stderr
    for phrase in phrases:
        assert phrase in errors[0], errors[0]
    return errors[0]


def write_rows(path: Path, rows: list[list], columns=HOUSES_COLUMNS) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return path


def read_rows(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


class Trained:
    def __init__(self, folder: Path, script: Path, run_dir: Path, train: subprocess.CompletedProcess):
        self.folder, self.script, self.run_dir, self.train = folder, script, run_dir, train

    def command(self, *args, fresh=False):
        return run(str(self.script), *args, "--output-dir", str(self.run_dir), cwd=self.folder, fresh=fresh)


@pytest.fixture(scope="module")
def houses(tmp_path_factory) -> Trained:
    """A houses-like CSV spec (a string column, adapted Normalization and StringLookup), its
    validation rows a file of their own, trained 2 epochs in a fresh interpreter."""
    folder = tmp_path_factory.mktemp("houses")
    with (ROOT / "data" / "houses.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    write_rows(folder / "train.csv", rows[:400])
    write_rows(folder / "valid.csv", rows[400:500])
    x = {"features": ["sqft", "bedrooms", "age"], "city": "city"}
    source = {"type": "csv", "x": x, "y": {"price": "price"}}
    spec = base_spec(
        data={
            "train": {"source": {**source, "path": "train.csv"}, "batch_size": 64, "shuffle": 512},
            "validation": {"source": {**source, "path": "valid.csv"}, "batch_size": 32},
        },
        model={
            "inputs": {"features": {"shape": [3], "dtype": "float32"}, "city": {"shape": [], "dtype": "string"}},
            "branches": {
                "features": [{"type": "Normalization", "adapt": True}],
                "city": [{"type": "StringLookup", "adapt": True, "output_mode": "one_hot", "max_tokens": 8}],
            },
            "merge": "concatenate",
            "layers": [{"type": "Dense", "units": 16, "activation": "relu", "kernel_regularizer": {"type": "L2"}}],
            "outputs": {"price": [{"type": "Dense", "units": 1}, {"type": "Rescaling", "scale": 1000.0}]},
        },
        targets={"price": {"shape": [], "dtype": "float32"}},
        losses={"price": {"type": "Huber", "delta": 10000.0}},
        metrics={"price": ["MeanAbsoluteError"]},
        optimizer={"type": "Adam", "learning_rate": 0.01},
    )
    spec["name"] = "houses"
    script = build(folder, spec, "houses")
    train = run(str(script), "--output-dir", "run", cwd=folder, env={**os.environ}, fresh=True)
    assert train.returncode == 0, train.stderr[-3000:]
    return Trained(folder, script, folder / "run", train)


def test_a_training_run_says_nothing_of_tensorflows_start_on_stderr(houses):
    assert not any(mark in houses.train.stderr for mark in STARTUP_MARKS), houses.train.stderr


def test_predict_writes_each_csv_rows_number_and_the_models_price(houses):
    import keras
    import numpy as np

    rows = [[900 + 50 * i, 1 + i % 4, 5 + i, ["Riverton", "Lakeside", "Nowhere"][i % 3]] for i in range(70)]
    new = write_rows(houses.folder / "new.csv", rows, HOUSES_COLUMNS[:4])  # no price column
    result = houses.command("predict", str(new), "--out", "new.csv.jsonl")
    assert result.returncode == 0, result.stderr
    assert "predicted 70 examples" in result.stderr
    predicted = read_rows(houses.folder / "new.csv.jsonl")
    assert [row["id"] for row in predicted] == list(range(1, 71))
    model = keras.saving.load_model(houses.run_dir / "model.keras", compile=False)
    features = np.array([row[:3] for row in rows], "float32")
    cities = np.array([row[3] for row in rows])
    expected = model({"features": features, "city": cities}, training=False)["price"].numpy().ravel()
    assert np.allclose([row["price"] for row in predicted], expected, rtol=1e-5)
    default = houses.command("predict", str(new))  # CSV, in the run folder
    assert default.returncode == 0, default.stderr
    as_csv = read_rows(houses.run_dir / "predictions.csv")
    assert [float(row["price"]) for row in as_csv] == [row["price"] for row in predicted]


def test_evaluate_gives_the_validation_figures_the_run_logged(houses):
    result = houses.command("evaluate", "valid.csv")
    assert result.returncode == 0, result.stderr
    evaluation = json.loads((houses.run_dir / "evaluation.json").read_text())
    last = read_history(houses.run_dir)[-1]
    assert evaluation["examples"] == 100
    assert evaluation["loss"] == pytest.approx(last["val_loss"], rel=1e-5)
    assert evaluation["mean_absolute_error"] == pytest.approx(last["val_mean_absolute_error"], rel=1e-5)


def test_tfgen_predict_runs_the_runs_script_on_its_folder_quietly(houses):
    # tfgen starts the script in a fresh interpreter: its stderr shows what a start prints.
    predicted = tfgen("predict", "run", "valid.csv", "--out", "valid.predictions.csv", cwd=houses.folder)
    assert predicted.returncode == 0, predicted.stderr
    assert not any(mark in predicted.stderr for mark in STARTUP_MARKS), predicted.stderr
    rows = read_rows(houses.folder / "valid.predictions.csv")
    assert len(rows) == 100
    assert rows[0]["id"] == "1"
    assert float(rows[0]["price"]) > 0


def test_a_missing_column_is_one_line_and_nothing_is_written(houses):
    unlabelled = write_rows(houses.folder / "unlabelled.csv", [[1000, 2, 3, "Riverton"]], HOUSES_COLUMNS[:4])
    evaluated = houses.command("evaluate", str(unlabelled), "--out", "e.json")
    one_error_line(evaluated, "unlabelled.csv", "no column `price`")
    no_age = write_rows(houses.folder / "no_age.csv", [[1000, 2, "Riverton"]], ["sqft", "bedrooms", "city"])
    predicted = houses.command("predict", str(no_age), "--out", "p.csv")
    one_error_line(predicted, "no_age.csv", "no column `age`")
    assert not (houses.folder / "e.json").exists()
    assert not (houses.folder / "p.csv").exists()
    assert not any(path.name.startswith(".p.csv") for path in houses.folder.iterdir())


def test_a_run_folder_without_a_model_is_one_line(houses, tmp_path):
    untrained = tmp_path / "untrained"
    untrained.mkdir()
    (untrained / "run.json").write_text((houses.run_dir / "run.json").read_text())
    by_script = run(str(houses.script), "predict", "valid.csv", "--output-dir", str(untrained), cwd=houses.folder)
    one_error_line(by_script, "untrained", "no trained model (model.keras)")
    by_tfgen = tfgen("predict", str(untrained), "valid.csv", cwd=houses.folder)
    one_error_line(by_tfgen, "untrained", "no trained model (model.keras)", code=2)
    (untrained / "generator.keras").write_bytes(b"")
    (untrained / "discriminator.keras").write_bytes(b"")
    networks = tfgen("evaluate", str(untrained), "valid.csv", cwd=houses.folder)
    one_error_line(networks, "no single model", "discriminator.keras, generator.keras", code=2)
    assert sorted(path.name for path in untrained.iterdir()) == ["discriminator.keras", "generator.keras", "run.json"]


def test_predicts_help_imports_no_tensorflow_and_says_nothing_on_stderr(houses):
    code = (
        "import runpy, sys\n"
        f"sys.argv = [{str(houses.script)!r}, 'predict', '--help']\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('tensorflow imported:', 'tensorflow' in sys.modules)\n"
    )
    helped = run("-c", code, cwd=houses.folder, fresh=True)
    assert "--top-k" in helped.stdout
    assert "tensorflow imported: False" in helped.stdout
    assert helped.stderr == ""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> Trained:
    """A small CNN on image class folders (names from the folders), validated on a folder of
    its own, trained 2 epochs."""
    folder = tmp_path_factory.mktemp("shapes")
    write_images(folder / "train", per_class=12)
    write_images(folder / "valid", per_class=4, jpegs=0)
    source = {"type": "image_folder", "directory": "valid", "image_size": [8, 8]}
    spec = image_spec(Path("train"), validation={"source": source})
    del spec["data"]["validation_split"], spec["data"]["stratify"]
    script = build(folder, spec, "shapes")
    train = run(str(script), "--output-dir", "run", cwd=folder)
    assert train.returncode == 0, train.stderr[-3000:]
    return Trained(folder, script, folder / "run", train)


def test_predict_on_an_image_folder_names_each_file_and_its_likeliest_classes(shapes):
    result = shapes.command("predict", "valid", "--top-k", "3", "--out", "p.csv")
    assert result.returncode == 0, result.stderr
    rows = read_rows(shapes.folder / "p.csv")
    files = sorted(str(path.relative_to(shapes.folder)) for path in (shapes.folder / "valid").rglob("*.png"))
    assert sorted(row["id"] for row in rows) == files
    for row in rows:
        assert {row["shape"], row["shape_2"], row["shape_3"]} == {"circle", "square", "stripes"}
        chances = [float(row[f"{column}_probability"]) for column in ("shape", "shape_2", "shape_3")]
        assert chances == sorted(chances, reverse=True)
        assert sum(chances) == pytest.approx(1.0, abs=1e-5)


def test_evaluate_on_class_folders_gives_the_logged_validation_figures(shapes):
    result = shapes.command("evaluate", "valid")
    assert result.returncode == 0, result.stderr
    evaluation = json.loads((shapes.run_dir / "evaluation.json").read_text())
    last = read_history(shapes.run_dir)[-1]
    assert evaluation["examples"] == 12
    assert evaluation["loss"] == pytest.approx(last["val_loss"], rel=1e-5)
    accuracy = evaluation["sparse_categorical_accuracy"]
    assert accuracy == pytest.approx(last["val_sparse_categorical_accuracy"], rel=1e-6)


def test_an_unknown_class_folder_is_one_line_and_nothing_is_written(shapes):
    write_images(shapes.folder / "odd", classes=("circle", "square", "triangle"), per_class=2)
    result = shapes.command("evaluate", "odd", "--out", "odd.json")
    one_error_line(result, "triangle", "not a class")
    assert not (shapes.folder / "odd.json").exists()


def test_an_npz_run_predicts_on_arrays_without_targets_and_evaluates_its_validation_file(tmp_path):
    """An .npz with the training source's keys: predict needs only the input arrays (the class
    name and probability of each row); evaluate gives the figures the run logged for that file."""
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    for name, rows in (("train.npz", 192), ("valid.npz", 64)):
        features = rng.normal(size=(rows, 8)).astype("float32")
        np.savez(tmp_path / name, x=features, y=(features[:, 0] > 0).astype("int32") + (features[:, 1] > 1))
    source = {"type": "npz", "x": "x", "y": "y"}
    spec = base_spec(
        data={
            "train": {"source": {**source, "path": "train.npz"}, "batch_size": 32, "shuffle": 192},
            "validation": {"source": {**source, "path": "valid.npz"}, "batch_size": 32},
        },
        targets={"label": {"shape": [], "dtype": "int32", "classes": ["low", "middle", "high"]}},
    )
    script = build(tmp_path, spec)
    trained = Trained(tmp_path, script, tmp_path / "run", run(str(script), "--output-dir", "run", cwd=tmp_path))
    assert trained.train.returncode == 0, trained.train.stderr[-3000:]
    new = rng.normal(size=(10, 8)).astype("float32")
    np.savez(tmp_path / "new.npz", x=new)  # no `y`
    predicted = trained.command("predict", "new.npz", "--out", "new.jsonl")
    assert predicted.returncode == 0, predicted.stderr
    rows = read_rows(tmp_path / "new.jsonl")
    model = keras.saving.load_model(trained.run_dir / "model.keras", compile=False)
    probabilities = keras.ops.softmax(model({"features": new}, training=False)["label"]).numpy()
    assert [row["id"] for row in rows] == list(range(1, 11))
    assert [row["label"] for row in rows] == [["low", "middle", "high"][i] for i in probabilities.argmax(-1)]
    assert [row["label_probability"] for row in rows] == pytest.approx(probabilities.max(-1), rel=1e-5)
    evaluated = trained.command("evaluate", "valid.npz")
    assert evaluated.returncode == 0, evaluated.stderr
    evaluation = json.loads((trained.run_dir / "evaluation.json").read_text())
    last = read_history(trained.run_dir)[-1]
    assert evaluation["loss"] == pytest.approx(last["val_loss"], rel=1e-5)
    assert evaluation["sparse_categorical_accuracy"] == pytest.approx(last["val_sparse_categorical_accuracy"])
    unlabelled = trained.command("evaluate", "new.npz", "--out", "e.json")
    one_error_line(unlabelled, "new.npz", "no array y")
    assert not (tmp_path / "e.json").exists()
