"""A golden matrix of option combinations: every one builds, is clean under stock black and
ruff, and compiles; a covering subset of the ones a CPU can run trains two steps.

precision x strategy x in_memory x on_nonfinite x loss weighting = 3 x 3 x 2 x 2 x 3 = 108
builds. The runs cover every value of every axis at least once (and every pair that matters
most: float16 with each strategy and each non-finite policy).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import base_spec

from tfgen.generate.build import plan_targets

# 108 builds (~17 s) and 7 training runs: slow as a group.
pytestmark = pytest.mark.slow

PRECISIONS = ["float32", "mixed_float16", "mixed_bfloat16"]
STRATEGIES = ["default", "mirrored", "multi_worker_mirrored"]
IN_MEMORY = [True, False]
NONFINITE = ["stop", "skip"]
WEIGHTING = ["static", "uncertainty", "ema_ratio"]
COMBOS = list(itertools.product(PRECISIONS, STRATEGIES, IN_MEMORY, NONFINITE, WEIGHTING))
# Trained for two steps (multi-worker needs a cluster: tests/e2e/test_distribution.py runs it).
RUN = [
    ("float32", "default", True, "stop", "static"),
    ("float32", "mirrored", False, "skip", "uncertainty"),
    ("mixed_float16", "default", False, "stop", "ema_ratio"),
    ("mixed_float16", "mirrored", True, "skip", "static"),
    ("mixed_float16", "default", True, "skip", "uncertainty"),
    ("mixed_bfloat16", "mirrored", True, "stop", "ema_ratio"),
    ("mixed_bfloat16", "default", False, "skip", "static"),
]


def matrix_spec(precision, strategy, in_memory, on_nonfinite, weighting) -> dict:
    """Two heads (so that weighting has tasks to weight) on a small synthetic problem."""
    spec = base_spec()
    spec["name"] = "matrix"
    spec["precision"] = precision
    spec["strategy"] = {"type": strategy}
    spec["data"]["train"]["in_memory"] = in_memory
    spec["model"]["outputs"]["value"] = [{"type": "Dense", "units": 1}]
    spec["targets"]["value"] = {"shape": [1]}
    spec["losses"]["value"] = {"type": "MeanSquaredError", "weight": 0.5}
    spec["train"] = {"epochs": 1, "on_nonfinite": on_nonfinite}
    spec["loss_weighting"] = {"type": weighting}
    return spec


def stem(combo) -> str:
    return "_".join(str(part).lower() for part in combo)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every combination built into one folder."""
    folder = tmp_path_factory.mktemp("matrix")
    specs = []
    for combo in COMBOS:
        path = folder / f"{stem(combo)}.yaml"
        path.write_text(json.dumps(matrix_spec(*combo)))  # JSON is YAML
        specs.append(path)
    targets = plan_targets(specs, folder / "generated")
    (folder / "generated").mkdir()
    for target in targets:
        target.output.parent.mkdir(exist_ok=True)
        target.output.write_text(target.text)
    (folder / "pyproject.toml").write_text("")  # no configuration found above: stock tools
    return folder


def test_every_combination_builds_and_compiles(built):
    scripts = sorted((built / "generated").glob("*.py"))
    assert len(scripts) == len(COMBOS)
    for script in scripts:
        compile(script.read_text(), str(script), "exec")


def test_every_combination_is_clean_under_stock_black_and_ruff(built):
    black = subprocess.run(
        [sys.executable, "-m", "black", "--check", "generated"], cwd=built, capture_output=True, text=True, check=False
    )
    assert black.returncode == 0, black.stderr[-3000:]
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "generated"],
        cwd=built,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout[-3000:]


def test_the_runs_cover_every_value_of_every_axis():
    for axis, values in enumerate([PRECISIONS, STRATEGIES[:2], IN_MEMORY, NONFINITE, WEIGHTING]):
        assert {combo[axis] for combo in RUN} == set(values)


def test_runnable_combinations_train_two_steps(built):
    def train(combo):
        out = built / "runs" / stem(combo)
        command = [
            sys.executable,
            str(built / "generated" / f"{stem(combo)}.py"),
            "--synthetic",
            "--epochs",
            "1",
            "--steps-per-epoch",
            "2",
            "--output-dir",
            str(out),
        ]
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)
        return combo, result, out

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(train, RUN))
    for combo, result, out in results:
        assert result.returncode == 0, f"{combo}: {result.stderr[-2000:]}"
        (row,) = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
        assert row["epoch"] == 1 and row["loss"] == row["loss"]  # a number, not NaN
        assert ("loss_scale" in row) == (combo[0] == "mixed_float16")
        assert ("label_loss_weight" in row) == (combo[4] != "static")
    shutil.rmtree(built / "runs", ignore_errors=True)
