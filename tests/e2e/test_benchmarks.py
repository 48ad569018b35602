"""The benchmark harness runs end to end at tiny sizes (the full run is not part of CI)."""

from __future__ import annotations

import json
import shutil
import sys

import pytest
from conftest import ROOT, load_module


@pytest.mark.slow
def test_benchmark_smoke_run_writes_results_and_report(tmp_path, monkeypatch):
    """The driver's main in this process (its workers are processes: the zygote forks them)."""
    if "matplotlib" in sys.modules and sys.modules["matplotlib"] is None:  # tests/train_env's block
        monkeypatch.delitem(sys.modules, "matplotlib")  # the driver draws docs/benchmarks.png
    results = tmp_path / "latest.json"
    docs = tmp_path / "docs"
    run = load_module(ROOT / "benchmarks" / "run.py")
    assert run.main(["--smoke", "--results", str(results), "--docs", str(docs)]) == 0
    rows = json.loads(results.read_text())
    assert {row["system"] for row in rows} == {"fit_default", "fit_tuned", "naive", "tfgen", "limit", "limit_metrics"}
    for row in rows:
        assert set(row) >= {
            "case",
            "system",
            "examples_per_second",
            "first_step_seconds",
            "peak_rss_mb",
            "rss_growth_mb",
        }
        assert row["examples_per_second"] > 0 and row["peak_rss_mb"] > 100
    report = (docs / "benchmarks.md").read_text()
    assert "| mlp | tfgen |" in report and "## Targets" in report and "## Build speed" in report
    assert (docs / "benchmarks.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.parametrize("case", ["image_folder", "csv"])
def test_a_file_case_trains_fit_on_keras_own_loader_over_the_cases_files(case):
    run = load_module(ROOT / "benchmarks" / "run.py")
    files = run.prepare(case, examples=192, epochs=2)  # the files, written by a process of their own
    try:
        result = run.run_one(case, "fit_tuned", examples=192, epochs=2, timeout=600, files=files)
    finally:
        shutil.rmtree(files["data"])
    assert result["epochs"] == 2 and result["examples_per_second"] > 0


def test_targets_give_each_rounds_ratio_beside_the_ratio_of_the_medians():
    """Two rounds: each round pairs the two systems' runs of that round (the noise shows)."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    tfgen = {"case": "mlp", "system": "tfgen", "epochs": 3, "examples_per_second": 90.0}
    tuned = {"case": "mlp", "system": "fit_tuned", "epochs": 3, "examples_per_second": 100.0}
    tfgen["rounds_examples_per_second"] = [60.0, 120.0]
    tuned["rounds_examples_per_second"] = [120.0, 80.0]
    (verdict,) = [v for v in run.evaluate([tfgen, tuned]) if "tuned fit" in v[0]]
    assert verdict[1:] == ("mlp", 0.9, False, [0.5, 1.5])
    one_round = {**tfgen, "rounds_examples_per_second": [90.0]}
    (verdict,) = [v for v in run.evaluate([one_round, tuned]) if "tuned fit" in v[0]]
    assert verdict[4] == []  # one round (or rounds that do not pair): no column to show
