"""`tfgen manifest`: golden TFJob and sbatch files (their runs on localhost are in test_multi_worker.py)."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from conftest import ROOT
from tfgen.cli import main

FOLDER = ROOT / "tests" / "manifests"
SPEC = "tests/manifests/mw.yaml"
GOLDEN = {
    "mw.tfjob.yaml": ["--kind", "tfjob", "--workers", "2", "--image", "registry.example/train:1", "--cpus", "4",
                      "--memory", "8Gi", "--volume-claim", "runs", "--command", "python generated/mw.py --output-dir /runs/mw"],
    "mw.sbatch": ["--kind", "slurm", "--workers", "2", "--cpus", "4", "--memory", "8G", "--gpus", "1",
                  "--command", "python generated/mw.py --output-dir runs/mw"],
}


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_manifest_matches_its_golden_file(golden, capsys, monkeypatch):
    """Regenerate: `tfgen manifest tests/manifests/mw.yaml ARGS > tests/manifests/GOLDEN` (ARGS above)."""
    monkeypatch.chdir(ROOT)
    assert main(["manifest", SPEC, *GOLDEN[golden]]) == 0
    assert capsys.readouterr().out == (FOLDER / golden).read_text()


def test_the_tfjob_is_a_kubeflow_v1_job_of_worker_replicas_restarted_on_failure():
    job = yaml.safe_load((FOLDER / "mw.tfjob.yaml").read_text())
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "TFJob")
    worker = job["spec"]["tfReplicaSpecs"]["Worker"]
    assert list(job["spec"]["tfReplicaSpecs"]) == ["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (2, "OnFailure")
    (container,) = worker["template"]["spec"]["containers"]
    assert container["name"] == "tensorflow"  # the operator's default container name
    assert container["command"] == ["python", "generated/mw.py", "--output-dir", "/runs/mw"]


def test_the_sbatch_script_is_valid_bash_with_one_task_per_node():
    text = (FOLDER / "mw.sbatch").read_text()
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n" in text
    assert text.endswith("srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c task\n")


@pytest.mark.parametrize("argv, message", [
    (["--kind", "tfjob", "--workers", "2"], "tfgen: error: --kind tfjob needs --image"),
    (["--kind", "slurm", "--workers", "0"], "tfgen: error: --workers must be at least 1"),
    (["--kind", "slurm", "--workers", "2", "--gpus", "-1"], "tfgen: error: --gpus, --cpus and --max-restarts must"),
])
def test_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["manifest", SPEC, *argv]) == 2
    assert capsys.readouterr().err.startswith(message)


def test_a_spec_for_one_machine_is_a_located_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["manifest", "specs/digits.yaml", "--kind", "slurm", "--workers", "2"]) == 2
    assert capsys.readouterr().err.startswith("specs/digits.yaml:")
