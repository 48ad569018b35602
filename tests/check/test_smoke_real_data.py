"""`tfgen smoke --real-data N` runs each script on the first N examples of its real data: it finds
what synthetic data hides (here a loader that returns one array instead of an `(x, y)` pair).
`tfgen smoke` runs through the CLI's main in this process; the scripts it runs are processes."""

from __future__ import annotations

import pytest
import yaml
from conftest import base_spec, tfgen_here, write_module

pytestmark = pytest.mark.slow


def test_real_data_finds_the_loader_bug_that_synthetic_data_hides(tmp_path):
    write_module(tmp_path, "loader", "import numpy as np\n\n\ndef load():\n    return np.zeros((64, 9))\n")
    spec = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "loader:load"}, "batch_size": 16},
            "validation_split": 0.25,
        }
    )
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    synthetic = tfgen_here("smoke", "spec.yaml", cwd=tmp_path)
    assert synthetic.returncode == 0, synthetic.stdout + synthetic.stderr
    real = tfgen_here("smoke", "spec.yaml", "--real-data", "32", cwd=tmp_path)
    assert real.returncode == 1
    assert real.stdout.splitlines()[0] == (
        "FAIL spec.yaml: error: loader:load: returned one array of shape (64, 9), "
        "not an `(inputs, targets)` pair (first run)"
    )


def test_real_data_trains_on_the_first_examples_and_resumes(tmp_path):
    write_module(
        tmp_path,
        "loader",
        "import numpy as np\n\n\ndef load():\n"
        "    rng = np.random.default_rng(0)\n"
        "    return rng.random((400, 8), dtype='float32'), rng.integers(0, 3, 400).astype('int32')\n",
    )
    spec = base_spec(
        data={
            "train": {"source": {"type": "python", "function": "loader:load"}, "batch_size": 16},
            "validation_split": 0.25,
        }
    )
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("smoke", "spec.yaml", "--real-data", "64", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("PASS spec.yaml (saved at epoch 1, resumed to epoch 2;")
