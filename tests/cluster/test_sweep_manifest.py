"""`tfgen manifest --sweep`: a Kubernetes indexed Job or a Slurm job array whose workers each run
`tfgen sweep SPEC --storage URL --trials N --worker` on the shared study."""

from __future__ import annotations

import shlex
import subprocess

import pytest
import yaml
from conftest import base_spec, tfgen_here

URL = "postgresql://sweeper@db.example/sweeps"
SPACE = "optimizer.learning_rate=log(1e-4,1e-2)"


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(base_spec(sweep={"trials": 12, "space": {"model.layers.0.units": [8, 16]}})))
    return path


def manifest(tmp_path, *args):
    result = tfgen_here("manifest", "small.yaml", "--sweep", "--storage", URL, "--workers", "3", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_sweep_job_is_an_indexed_job_whose_pods_each_run_a_sweep_worker(spec, tmp_path):
    text = manifest(tmp_path, "--kind", "job", "--image", "img:1", "--volume-claim", "runs", "--space", SPACE)
    job = yaml.safe_load(text)
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert {k: job["spec"][k] for k in ("completionMode", "completions", "parallelism")} == {
        "completionMode": "Indexed",
        "completions": 3,
        "parallelism": 3,
    }
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == [
        "tfgen", "sweep", "small.yaml", "--storage", URL, "--trials", "12", "--worker", "--space", SPACE,
        "--dir", "/runs/sweeps",
    ]  # fmt: skip
    assert job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "runs"}


def test_the_sweep_array_is_valid_bash_running_one_worker_per_array_task(spec, tmp_path):
    text = manifest(tmp_path, "--kind", "slurm", "--trials", "5")
    assert "#SBATCH --array=0-2\n" in text
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0
    last = text.rstrip().splitlines()[-1]
    assert shlex.split(last) == ["exec", "tfgen", "sweep", "small.yaml", "--storage", URL, "--trials", "5", "--worker"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "slurm", "--storage", "sqlite:///study.db"], "--sweep needs --storage URL of a database"),
        (["--kind", "tfjob", "--image", "i"], "--sweep writes --kind job (a Kubernetes indexed Job) or slurm"),
        (["--kind", "slurm", "--space", "model.layers.4.units=[1,2]"], "--space model.layers.4.units: no such place"),
    ],
)
def test_a_sweep_manifest_that_cannot_work_is_one_line_and_writes_nothing(spec, tmp_path, args, message):
    result = tfgen_here("manifest", "small.yaml", "--sweep", "--workers", "2", "--storage", URL, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr


def test_a_job_manifest_is_only_for_a_sweep(spec, tmp_path):
    result = tfgen_here("manifest", "small.yaml", "--kind", "job", "--image", "i", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 2
    assert "--kind job (a Kubernetes indexed Job) is for --sweep" in result.stderr
