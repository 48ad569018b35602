"""`tfgen manifest`: golden TFJob and sbatch files (their runs on localhost are in test_multi_worker.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess

import pytest
import yaml
from conftest import ROOT

from tfgen.cli import main
from tfgen.cluster.manifest import comment

FOLDER = ROOT / "tests" / "cluster" / "manifests"
SPEC = "tests/cluster/manifests/mw.yaml"
GOLDEN = {
    "mw.tfjob.yaml": [
        "--kind",
        "tfjob",
        "--workers",
        "2",
        "--image",
        "registry.example/train:1",
        "--cpus",
        "4",
        "--memory",
        "8Gi",
        "--volume-claim",
        "runs",
        "--command",
        "python generated/mw.py --output-dir /runs/mw",
    ],
    "mw.sbatch": [
        "--kind",
        "slurm",
        "--workers",
        "2",
        "--cpus",
        "4",
        "--memory",
        "8G",
        "--gpus",
        "1",
        "--command",
        "python generated/mw.py --output-dir runs/mw",
    ],
}


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_manifest_matches_its_golden_file(golden, capsys, monkeypatch):
    """Regenerate: `tfgen manifest tests/cluster/manifests/mw.yaml ARGS > tests/cluster/manifests/GOLDEN` (ARGS above)."""
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


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--kind", "tfjob", "--workers", "2"], "tfgen: error: --kind tfjob needs --image"),
        (["--kind", "slurm", "--workers", "0"], "tfgen: error: --workers must be at least 1"),
        (["--kind", "slurm", "--workers", "2", "--gpus", "-1"], "tfgen: error: --gpus, --cpus and --max-restarts must"),
    ],
)
def test_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["manifest", SPEC, *argv]) == 2
    assert capsys.readouterr().err.startswith(message)


def test_a_spec_for_one_machine_is_a_located_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["manifest", "specs/digits.yaml", "--kind", "slurm", "--workers", "2"]) == 2
    assert capsys.readouterr().err.startswith("specs/digits.yaml:")


# --- untrusted values: nothing in a value runs, nothing breaks a line --------------------------------------

SRUN_STUB = """#!/bin/bash
# srun: runs its command once, as the one task of a one-node step
while [[ $1 == --* ]]; do shift; done
export SLURM_PROCID=0 SLURM_STEP_NODELIST=localhost SLURM_STEP_TASKS_PER_NODE=1
exec "$@"
"""
# python: answers the RESOLVE step with a TF_CONFIG; any other run records its words and TF_CONFIG.
PYTHON_STUB = """#!/bin/bash
if [[ $1 == -c && $2 == "$RESOLVE" ]]; then
    echo '{"cluster": {"worker": ["localhost:12345"]}, "task": {"type": "worker", "index": 0}}'
    exit 0
fi
printf '%s\\0' "$@" > "$RECORD/argv"
printf '%s' "$TF_CONFIG" > "$RECORD/tf_config"
"""


def _manifest(capsys, spec, *argv):
    code = main(["manifest", str(spec), "--workers", "2", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _run_sbatch(tmp_path, text):
    """Run the sbatch script as the batch host would, `srun` and `python` stubbed; the worker's words
    after `python`."""
    stubs, record = tmp_path / "stubs", tmp_path / "record"
    stubs.mkdir(exist_ok=True)
    record.mkdir(exist_ok=True)
    for name, stub in (("srun", SRUN_STUB), ("python", PYTHON_STUB)):
        (stubs / name).write_text(stub)
        (stubs / name).chmod(0o755)
    (tmp_path / "job.sbatch").write_text(text)
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "RECORD": str(record)}
    result = subprocess.run(
        ["bash", "job.sbatch"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((record / "tf_config").read_text())["task"] == {"type": "worker", "index": 0}
    return (record / "argv").read_text().split("\0")[:-1]


@pytest.mark.parametrize(
    "command",
    [
        "python x.py $(touch PLANTED)",
        "python x.py `touch PLANTED`",
        'python x.py "$(touch PLANTED)"',
        "python x.py '$(touch PLANTED)'",
        "python x.py | touch PLANTED",
        "python x.py && touch PLANTED",
        "python x.py; touch PLANTED",
        "python x.py > PLANTED",
        "python x.py --flag='a b' \\$HOME",
    ],
)
def test_shell_code_in_the_command_never_runs_on_the_batch_host_or_the_nodes(command, tmp_path, capsys):
    planted = tmp_path / "planted"
    command = command.replace("PLANTED", str(planted))
    code, out, err = _manifest(capsys, ROOT / SPEC, "--kind", "slurm", "--command", command)
    assert code == 0, err
    assert subprocess.run(["bash", "-n"], input=out, text=True, check=False).returncode == 0
    assert _run_sbatch(tmp_path, out) == shlex.split(command)[1:]  # the words, each as is
    assert not planted.exists()


def test_shell_code_in_the_spec_file_name_never_runs_on_the_nodes(tmp_path, capsys):
    spec = tmp_path / "x$(touch planted)`touch planted`'.yaml"
    spec.write_text((FOLDER / "mw.yaml").read_text())
    code, out, err = _manifest(capsys, spec, "--kind", "slurm")
    assert code == 0, err
    assert _run_sbatch(tmp_path, out) == ["generated/x$(touch planted)`touch planted`'.py"]
    assert not (tmp_path / "planted").exists()


@pytest.mark.parametrize("kind", ["slurm", "tfjob"])
@pytest.mark.parametrize(
    "option, value",
    [
        ("--command", "python x.py\ntouch /tmp/tfgen-planted"),
        ("--command", "python x.py\n---\napiVersion: v1\nkind: Pod"),
        ("--command", "python x.py\r\ttouch"),
        ("--command", "python x.py\u2028---\u2028kind: Pod"),  # a line break to YAML 1.1 readers
        ("--command", "python x.py\x85kind: Pod"),
        ("--command", "python x.py\x7f"),
        ("--memory", "8G\ntouch /tmp/tfgen-planted"),
        ("--image", "registry.example/train:1\n---\nkind: Pod"),
        ("--volume-claim", "runs\nkind: Pod"),
        ("--mount", "/runs\tx"),
        ("SPEC", "x\ntouch planted\n.yaml"),
    ],
)
def test_a_control_character_in_any_value_is_a_one_line_usage_error(kind, option, value, tmp_path, capsys):
    spec = ROOT / SPEC
    argv = ["--kind", kind, "--image", "registry.example/train:1"]
    if option == "SPEC":
        spec = tmp_path / value
        spec.write_text((FOLDER / "mw.yaml").read_text())
    else:
        argv += [option, value]
    code, out, err = _manifest(capsys, spec, *argv)
    assert (code, out) == (2, "")
    assert err == f"tfgen: error: {option}: control characters (newline, tab, ...) are not allowed\n"


def test_every_comment_line_built_from_values_starts_with_a_hash():
    assert comment(["one\ntwo", "three\u2028four"]) == "# one\n# two\n# three\n# four\n"


TRICKY = "a: b # c --- 'd' \"e\" {f} [g] *h &i !j %k @l `m` $(n)"


def test_the_tfjob_is_one_document_holding_each_value_as_given(tmp_path, capsys):
    spec = tmp_path / "x --- #y: z'.yaml"
    spec.write_text((FOLDER / "mw.yaml").read_text())
    code, out, err = _manifest(
        capsys,
        spec,
        "--kind",
        "tfjob",
        "--image",
        TRICKY,
        "--volume-claim",
        TRICKY,
        "--mount",
        f"/{TRICKY}",
        "--command",
        shlex.join(["python", TRICKY]),
    )
    assert code == 0, err
    (job,) = yaml.safe_load_all(out)
    pod = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == TRICKY
    assert container["command"] == ["python", TRICKY.replace("$", "$$")]  # Kubernetes reads `$$` as `$`
    assert container["volumeMounts"][0]["mountPath"] == f"/{TRICKY}"
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == TRICKY


@pytest.mark.parametrize("kind", ["slurm", "tfjob"])
@pytest.mark.parametrize(
    "command, message",
    [
        ("python x.py 'oops", "--command: no closing quotation"),
        ('python x.py "oops', "--command: no closing quotation"),
        ("python x.py oops\\", "--command: no escaped character"),
        ("   ", "--command is empty"),
    ],
)
def test_an_unbalanced_quote_in_the_command_is_a_one_line_usage_error(kind, command, message, capsys):
    code, out, err = _manifest(capsys, ROOT / SPEC, "--kind", kind, "--image", "i", "--command", command)
    assert (code, out, err) == (2, "", f"tfgen: error: {message}\n")


@pytest.mark.parametrize(
    "kind, argv, message",
    [
        ("slurm", ["--port", "-5"], "--port -5 is not in 1..65535"),
        ("slurm", ["--port", "0"], "--port 0 is not in 1..65535"),
        ("slurm", ["--port", "65536"], "--port 65536 is not in 1..65535"),
        ("slurm", ["--cpus", "0"], "--cpus must be at least 1 (leave it out for no limit)"),
        ("slurm", ["--memory", "8 G"], "--memory `8 G` is not a size: --kind slurm takes N[K|M|G|T]"),
        ("slurm", ["--memory", "8Gi"], "--memory `8Gi` is not a size: --kind slurm takes N[K|M|G|T]"),
        ("slurm", ["--memory", "16GB"], "--memory `16GB` is not a size: --kind slurm takes N[K|M|G|T]"),
        ("slurm", ["--memory", "0"], "--memory `0` is not a size"),
        ("slurm", ["--memory", "8G$(touch x)"], "--memory `8G$(touch x)` is not a size"),
        (
            "tfjob",
            ["--memory", "8 Gi"],
            "--memory `8 Gi` is not a size: --kind tfjob takes N[Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E]",
        ),
        ("tfjob", ["--memory", "8g"], "--memory `8g` is not a size: --kind tfjob takes"),
        ("tfjob", ["--memory", "16GB"], "--memory `16GB` is not a size: --kind tfjob takes"),
        ("tfjob", ["--memory=-1Gi"], "--memory `-1Gi` is not a size"),
    ],
)
def test_ports_counts_and_sizes_out_of_range_are_one_line_usage_errors(kind, argv, message, capsys):
    code, out, err = _manifest(capsys, ROOT / SPEC, "--kind", kind, "--image", "i", *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"tfgen: error: {message}") and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "kind, memory, line",
    [
        ("slurm", "16G", "#SBATCH --mem=16G\n"),
        ("slurm", "512M", "#SBATCH --mem=512M\n"),
        ("slurm", "4096", "#SBATCH --mem=4096\n"),
        ("tfjob", "512Mi", 'memory: "512Mi"\n'),
        ("tfjob", "16G", 'memory: "16G"\n'),
        ("tfjob", "1000000", 'memory: "1000000"\n'),
    ],
)
def test_sizes_of_each_kinds_documented_form_are_written_as_given(kind, memory, line, capsys):
    code, out, err = _manifest(
        capsys, ROOT / SPEC, "--kind", kind, "--image", "i", "--memory", memory, "--port", "65535"
    )
    assert code == 0, err
    assert line in out


# --- as Kubernetes reads a TFJob: YAML 1.2 numbers, `$(VAR)` expanded in a command ----------------------


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader reading numbers as YAML 1.2's core schema does (as Kubernetes' go-yaml
    does): `1e3` is a float, `0o17` and `0x1F` are ints (YAML 1.1 reads the first two as strings)."""


Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)$"),
    list("-+.0123456789"),
)
Yaml12Loader.add_implicit_resolver("tag:tfgen,octal", re.compile(r"^0o[0-7]+$"), ["0"])
Yaml12Loader.add_constructor("tag:tfgen,octal", lambda loader, node: int(node.value, 0))


def kubernetes_expansion(text: str, env: dict[str, str]) -> str:
    """What a container gets of a command word (Kubernetes' third_party/forked/golang/expansion):
    `$$` is `$`, `$(NAME)` is NAME's value when it is defined; any other `$` stays."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith("$(", i) and ")" in text[i + 2 :]:
            name = text[i + 2 : text.index(")", i + 2)]
            out.append(env.get(name, f"$({name})"))
            i += len(name) + 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def test_a_tfjob_value_that_looks_like_a_number_or_a_variable_reaches_the_pod_as_written(capsys):
    command = ["python", "x.py", "--rate", "1e3", "--mode", "0o17", "--hex", "0x1F", "--yes", "yes"]
    command += ["--home", "$(HOME)", "--literal", "$$(HOME)", "--dollar", "$HOME$"]
    code, out, err = _manifest(
        capsys,
        ROOT / SPEC,
        "--kind",
        "tfjob",
        "--image",
        "1e3",
        "--volume-claim",
        "0o17",
        "--memory",
        "1000000",
        "--command",
        shlex.join(command),
    )
    assert code == 0, err
    job = yaml.load(out, Loader=Yaml12Loader)
    pod = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    (container,) = pod["containers"]
    assert (container["image"], pod["volumes"][0]["persistentVolumeClaim"]["claimName"]) == ("1e3", "0o17")
    assert container["resources"]["limits"] == {"memory": "1000000"}
    assert all(isinstance(word, str) for word in container["command"])
    assert [kubernetes_expansion(word, {"HOME": "/root"}) for word in container["command"]] == command
