"""The run report (report.html and its PNGs) and confusion.json, as a person sees them: the
page rendered by headless Chromium, each image loaded and not blank; `tfgen report` on run
folders, one or several; its one-line refusals."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import base_spec, build, import_blocker, load_runtime, run_tfgen, tfgen_here, without_train_env

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Marks each image with its natural width once the page has loaded (0: it did not load).
PROBE = (
    "<script>window.addEventListener('load', () => {for (const img of document.images)"
    " img.setAttribute('data-width', img.naturalWidth); document.body.setAttribute('data-loaded', 'yes');});"
    "</script>"
)


def phased_spec(**overrides) -> dict:
    """base_spec with the report on, a test split, and two phases (epoch 1, then 2-3)."""
    spec = base_spec(**overrides)
    spec["logging"] = {"report": True}
    spec["data"]["test"] = {"source": {"type": "synthetic", "examples": 48}}
    spec["train"] = {"epochs": 3, "phases": [{"epochs": 1}, {"epochs": 2, "learning_rate_factor": 0.1}]}
    return spec


def train(folder: Path, spec: dict, stem: str, out: str) -> subprocess.CompletedProcess:
    """Build `spec` as folder/<stem>.yaml and run its script into folder/<out>, where matplotlib
    imports (tests/train_env blocks it elsewhere)."""
    script = build(folder, spec, stem)
    env = {**without_train_env(os.environ), "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, str(script), "--output-dir", str(folder / out)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False, cwd=folder)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def phased_run(tmp_path_factory):
    """One run of phased_spec that writes its own report: (project folder, run folder, stdout)."""
    folder = tmp_path_factory.mktemp("phased")
    result = train(folder, phased_spec(), "small", "run")
    return folder, folder / "run", result.stdout


def rendered_widths(page: Path) -> list[int]:
    """Each <img>'s natural width in `page` as headless Chromium renders it (a copy of the page
    beside it, with PROBE, so that the images' relative paths hold)."""
    assert CHROMIUM, "chromium is not installed (.ci/run installs it)"
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "--virtual-time-budget=5000"]
    result = subprocess.run([*command, probe.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    probe.unlink()
    assert 'data-loaded="yes"' in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    images = re.findall(r"<img [^>]*>", result.stdout)
    return [int(re.search(r'data-width="(\d+)"', img).group(1)) for img in images]


def assert_seen(page: Path) -> list[str]:
    """Every image of `page` loads in Chromium and its PNG holds more than two colours; their sources."""
    sources = re.findall(r'<img src="([^"]+)"', page.read_text())
    assert sources
    widths = rendered_widths(page)
    assert len(widths) == len(sources) and all(width > 100 for width in widths), (sources, widths)
    from PIL import Image  # (matplotlib's dependency)

    for source in sources:
        with Image.open(page.parent / source) as image:
            colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert len(colours) > 2, f"{source} is blank"
    return sources


@pytest.mark.slow
def test_a_run_writes_a_report_of_each_figure_the_rate_and_its_confusion_matrix_seen_in_a_browser(phased_run):
    _, run, stdout = phased_run
    assert f"Report: {run / 'report.html'}" in stdout
    sources = assert_seen(run / "report.html")
    names = {Path(source).name for source in sources}
    assert names == {"loss.png", "sparse_categorical_accuracy.png", "lr.png", "confusion_run_label.png"}
    page = (run / "report.html").read_text()
    assert "run: label (test data)" in page  # the confusion matrix of the test split
    runtime = load_runtime()
    assert runtime.run_report.Run(run, "run").phase_starts() == [2]  # drawn as a line before epoch 2


@pytest.mark.slow
def test_the_confusion_matrix_is_sklearns_on_the_final_models_test_predictions(phased_run):
    """confusion.json's counts against sklearn's confusion_matrix of model.keras's predictions
    on the same test examples (the script's own load_data)."""
    import keras
    from conftest import load_module
    from sklearn.metrics import confusion_matrix

    folder, run, _ = phased_run
    script = load_module(folder / "generated" / "small.py")
    _, _, test = script.load_data()
    model = keras.models.load_model(run / "model.keras")
    predicted = np.asarray(model.predict(test[0], verbose=0)["label"]).argmax(-1)
    expected = confusion_matrix(test[1]["label"], predicted, labels=[0, 1, 2])
    recorded = json.loads((run / "confusion.json").read_text())
    assert recorded["split"] == "test"
    assert recorded["targets"]["label"] == {"class_names": ["0", "1", "2"], "counts": expected.tolist()}
    assert expected.sum() == 48


@pytest.mark.slow
def test_a_two_class_target_with_one_logit_is_class_one_above_zero_in_its_confusion_matrix(tmp_path):
    """A one-unit output whose loss takes logits: sklearn's confusion_matrix of (logit > 0) on
    the validation examples (no test data), which a threshold at 0.5 would not give."""
    import keras
    from conftest import load_module
    from sklearn.metrics import confusion_matrix

    # Logits about 0.25 (a zero kernel, a bias of 0.25, a tiny rate): class 1 above 0, 0 above 0.5.
    between = {"kernel_initializer": "zeros", "bias_initializer": {"type": "Constant", "value": 0.25}}
    spec = base_spec(
        model={**base_spec()["model"], "outputs": {"label": [{"type": "Dense", "units": 1, **between}]}},
        targets={"label": {"shape": [1], "dtype": "float32", "classes": 2}},
        losses={"label": {"type": "BinaryCrossentropy", "from_logits": True}},
        metrics={"label": ["BinaryAccuracy"]},
        optimizer={"type": "SGD", "learning_rate": 1e-6},
    )
    train(tmp_path, spec, "binary", "run")
    _, validation = load_module(tmp_path / "generated" / "binary.py").load_data()
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    logits = np.asarray(model.predict(validation[0], verbose=0)["label"])[:, 0]
    expected = confusion_matrix(validation[1]["label"][:, 0], (logits > 0).astype(int), labels=[0, 1])
    recorded = json.loads((tmp_path / "run" / "confusion.json").read_text())
    assert recorded == {
        "split": "validation",
        "targets": {"label": {"class_names": ["0", "1"], "counts": expected.tolist()}},
    }
    assert ((logits > 0) != (logits > 0.5)).mean() > 0.5  # the threshold decides


def test_confusion_counts_equal_sklearns_for_ids_one_hot_labels_and_one_unit_outputs():
    from sklearn.metrics import confusion_matrix

    confusion = load_runtime().confusion
    rng = np.random.default_rng(0)
    labels, logits = rng.integers(0, 4, 200), rng.normal(size=(200, 4))
    expected = confusion_matrix(labels, logits.argmax(-1), labels=range(4))
    pair = confusion.predicted_classes(labels, logits, from_logits=True)
    assert (confusion.confusion_counts(*pair, 4) == expected).all()
    one_hot = np.eye(4)[labels]
    assert (confusion.confusion_counts(*confusion.predicted_classes(one_hot, logits, True), 4) == expected).all()
    binary, unit = rng.integers(0, 2, 100).astype("float32"), rng.normal(size=(100, 1))
    for from_logits, threshold in ((True, 0.0), (False, 0.5)):
        expected = confusion_matrix(binary, (unit[:, 0] > threshold).astype(int), labels=[0, 1])
        pair = confusion.predicted_classes(binary, unit, from_logits)
        assert (confusion.confusion_counts(*pair, 2) == expected).all()


def test_runs_whose_folders_share_a_name_are_labelled_by_the_parts_of_their_paths_that_differ(tmp_path):
    labels = load_runtime().run_report.labels
    assert labels([tmp_path / "a", tmp_path / "b"]) == ["a", "b"]
    sweep = [tmp_path / "sweep" / f"trial_000{i}" / "run" for i in (1, 0)]
    assert labels(sweep) == ["trial_0001/run", "trial_0000/run"]  # a sweep's trials
    assert labels([tmp_path / "x" / "seed" / "run", tmp_path / "y" / "seed" / "run"]) == ["x/seed/run", "y/seed/run"]


@pytest.mark.slow
def test_two_runs_are_overlaid_with_the_spec_key_that_differs_and_their_best_figures(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")  # the project the specs' paths are relative to
    slow = base_spec()
    fast = base_spec(optimizer={"type": "Adam", "learning_rate": 0.05})
    train(tmp_path, slow, "slow", "runs/slow")
    train(tmp_path, fast, "fast", "runs/fast")
    env = without_train_env(os.environ)
    result = run_tfgen("report", "slow", "fast", "--out", "../compare", cwd=tmp_path / "runs", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote compare/report.html\n"
    page = tmp_path / "compare" / "report.html"
    sources = assert_seen(page)
    assert {"loss.png", "sparse_categorical_accuracy.png", "lr.png"} <= {Path(s).name for s in sources}
    text = page.read_text()
    differences = text.split("What differs in the specs")[1].split("<h2>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", differences)
    assert rows[0] == "<th>spec key</th><th>slow</th><th>fast</th>"
    assert rows[1:] == ["<td>optimizer.learning_rate</td><td>0.01</td><td>0.05</td>"]  # the one key that differs
    losses = {name: [row["val_loss"] for row in rows_of(tmp_path / "runs" / name)] for name in ("slow", "fast")}
    for name, values in losses.items():
        assert f"<td>{name}</td>" in text and f"<td>{min(values):.4g}</td>" in text  # its best val_loss
    assert not (tmp_path / "runs" / "slow" / "report.html").exists()  # base_spec's report is off


def rows_of(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "history.jsonl").read_text().splitlines()]


def fake_run(folder: Path) -> Path:
    """A folder holding a history.jsonl of two epochs (what makes it a run for the report)."""
    folder.mkdir(parents=True)
    rows = [{"epoch": 1, "loss": 1.0, "val_loss": 1.1}, {"epoch": 2, "loss": 0.5, "val_loss": 0.7}]
    (folder / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def test_a_folder_that_is_not_a_run_is_one_line_naming_it_and_nothing_is_written(tmp_path):
    run = fake_run(tmp_path / "run")
    (tmp_path / "notes").mkdir()
    for args in (["notes"], ["run", "notes", "--out", "both"], ["missing"]):
        result = tfgen_here("report", *args, cwd=tmp_path)
        assert result.returncode == 2
        name = args[1] if args[0] == "run" else args[0]
        assert result.stderr == f"tfgen: error: {name} is not a run folder: it holds no history.jsonl\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes", "run"]
    assert sorted(path.name for path in run.iterdir()) == ["history.jsonl"]


def test_several_runs_without_out_is_one_line_and_nothing_is_written(tmp_path):
    fake_run(tmp_path / "a"), fake_run(tmp_path / "b")
    result = tfgen_here("report", "a", "b", cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "--out" in result.stderr
    assert not list(tmp_path.rglob("report*"))


@pytest.mark.slow
def test_tfgen_report_without_the_runtime_is_one_line_naming_the_install(tmp_path):
    fake_run(tmp_path / "run")
    env = import_blocker(tmp_path / "blocker", modules=("tfgen_runtime",))
    result = run_tfgen("report", str(tmp_path / "run"), env=env)
    assert result.returncode == 2
    assert result.stderr == 'error: tfgen report needs the training stack: pip install "tfgen[train]"\n'
    assert not (tmp_path / "run" / "report.html").exists()


def test_the_shipped_specs_keep_the_report_on():
    from conftest import SPECS

    for path in SPECS:
        assert yaml.safe_load(path.read_text()).get("logging", {}).get("report", True) is True, path
