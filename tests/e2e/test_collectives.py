"""One gradient all-reduce per step: the collective ops in the compiled training call, counted
on two logical CPU replicas (tests/e2e/collectives_runner.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, base_spec

pytestmark = pytest.mark.slow
RUNNER = ROOT / "tests" / "e2e" / "collectives_runner.py"
REPLICAS = 2


def _collectives(build_spec, tmp_path, stem, **overrides) -> int:
    """All-reduces in the step loop of a 2-replica run of the spec (each is one op per replica)."""
    spec = base_spec(strategy={"type": "mirrored"}, **overrides)
    spec["train"] = {"epochs": 1, "steps_per_execution": 2, **spec["train"]}
    script = build_spec(spec, stem=stem)
    counts = tmp_path / f"{stem}.json"
    command = [sys.executable, str(RUNNER), str(script), "--cpus", str(REPLICAS), "--counts", str(counts)]
    command += ["--", "--output-dir", str(tmp_path / stem), "--steps-per-epoch", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    ops = json.loads(counts.read_text())
    assert set(ops) == {"CollectiveReduceV2"}, ops
    assert ops["CollectiveReduceV2"] % REPLICAS == 0, ops
    return ops["CollectiveReduceV2"] // REPLICAS


# Each step: the gradients' all-reduce, and the losses' (the `stop` guard's verdict, 3 floats).
@pytest.mark.parametrize(
    "stem,overrides",
    [
        ("plain", {}),
        ("clip_global", {"train": {"gradient_clipping": {"global_norm": 0.5}}}),
        ("clip_value", {"train": {"gradient_clipping": {"value": 0.1}}}),
        ("float16", {"precision": "mixed_float16"}),
        ("float16_clip", {"precision": "mixed_float16", "train": {"gradient_clipping": {"norm": 0.5}}}),
    ],
)
def test_one_gradient_all_reduce_per_step_and_the_losses(build_spec, tmp_path, stem, overrides):
    assert _collectives(build_spec, tmp_path, stem, **overrides) == 2


# `skip`: the gradients' all-reduce, and the replicas' verdict on the loss (one float).
def test_skip_all_reduces_the_gradients_once_and_the_verdict(build_spec, tmp_path):
    train = {"on_nonfinite": "skip", "gradient_clipping": {"global_norm": 0.5}}
    assert _collectives(build_spec, tmp_path, "skip_clip", train=train) == 2
