"""`tfgen smoke`: every example spec passes (a checkpoint saved, a resume that really resumes);
a broken, a missing and a hung script fail with one line; usage and spec errors exit 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from conftest import ROOT, SPECS, base_spec, run_tfgen, snapshot, tfgen_here

from tfgen.check.smoke import Runner, Smoke, first_error, judge
from tfgen.cli import main
from tfgen.spec.load import load_spec
from tfgen.spec.loader import load_text
from tfgen.spec.validate import validate


@pytest.mark.slow
def project_files() -> dict[str, dict]:
    """generated/ and specs/ as snapshots, without Python's byte caches (other tests, run at the
    same time by pytest-xdist, may write a __pycache__ beside a script)."""
    return {
        name: {path: kept for path, kept in snapshot(ROOT / name).items() if "__pycache__" not in path}
        for name in ("generated", "specs")
    }


# The example specs whose committed script (or the spec itself, made deterministic) is trained,
# killed after a checkpoint and resumed to the uninterrupted run's history and weights on its real
# data elsewhere (more than smoke's save and resume on two synthetic steps): not smoked again
# here, for the suite's time. spec -> (the test file, what in it runs the spec).
REAL_DATA = "tests/e2e/test_example_specs_real_data.py"
RESUMED_ELSEWHERE = {
    "shapes.yaml": (REAL_DATA, '"shapes": ("sparse_categorical_accuracy"'),
    "houses.yaml": (REAL_DATA, '"houses": ("mean_absolute_error"'),
    "reviews.yaml": (REAL_DATA, '"reviews": ("accuracy"'),
    "finetune.yaml": ("tests/e2e/test_finetune_example.py", 'SCRIPT = ROOT / "generated" / "finetune.py"'),
    "gan.yaml": ("tests/e2e/test_gan.py", '(ROOT / "specs" / "gan.yaml")'),
    "custom_step.yaml": ("tests/e2e/test_custom_step.py", '(ROOT / "specs" / "custom_step.yaml")'),
    "simclr.yaml": ("tests/e2e/test_contrastive.py", '(ROOT / "specs" / "simclr.yaml")'),
    "tabular.yaml": ("tests/e2e/test_adapt.py", '(ROOT / "specs" / "tabular.yaml")'),
}
KILLS = ("KILL_AFTER_EPOCH", "--kill-in-epoch", "kill_after=")  # how those files kill a run mid-way
SMOKED = [spec for spec in SPECS if spec.name not in RESUMED_ELSEWHERE]


def test_every_example_spec_is_smoked_here_or_resumed_after_a_kill_elsewhere():
    assert set(RESUMED_ELSEWHERE) < {spec.name for spec in SPECS}
    for name, (where, runs_it) in RESUMED_ELSEWHERE.items():
        text = (ROOT / where).read_text()
        kills = any(kill in text for kill in KILLS)
        assert kills and runs_it in text, f"{where} no longer kills and resumes {name}"


@pytest.mark.slow  # trains each smoked example spec twice
def test_every_example_spec_passes_and_nothing_in_the_project_changes():
    before = project_files()
    runs_existed = (ROOT / "runs").exists()
    result = tfgen_here("smoke", *[f"specs/{spec.name}" for spec in SMOKED], cwd=ROOT)  # the scripts: processes
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[:-1] == [line for line in lines[:-1] if line.startswith("PASS ")]
    for spec, line in zip(SMOKED, lines, strict=False):
        tested = ", tested" if "test_split" in spec.read_text() else ""  # evaluated on its test split too
        assert line.startswith(f"PASS specs/{spec.name} (saved at epoch 1, resumed to epoch 2{tested}; "), line
    assert lines[-1].startswith(f"smoke: {len(SMOKED)} passed, 0 failed in ")
    assert project_files() == before
    assert (ROOT / "runs").exists() == runs_existed


def _spec(tmp_path, stem, cache=False, **model):
    """A small spec whose model is `model` (e.g. a builder), written to tmp_path/stem.yaml."""
    spec = base_spec(model={"inputs": {"features": {"shape": [8]}}, **model}) if model else base_spec()
    spec["data"]["train"]["cache"] = cache
    (tmp_path / f"{stem}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return f"{stem}.yaml"


@pytest.mark.slow
def test_failing_scripts_fail_with_their_first_error_line_and_exit_1(tmp_path):
    (tmp_path / "brokenmodel.py").write_text("def build():\n    raise ValueError('the builder is broken')\n")
    specs = [
        _spec(tmp_path, "good", cache="train.cache"),
        _spec(tmp_path, "broken", builder="brokenmodel:build"),
        _spec(tmp_path, "missing", builder="nowhere:build"),
    ]
    result = tfgen_here("smoke", *specs, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    good, broken, missing = result.stdout.splitlines()
    assert good.startswith("PASS good.yaml (saved at epoch 1, resumed to epoch 2; ")
    # A traceback: its exception line, located at the spec field of the generated function it left.
    where = _position((tmp_path / "broken.yaml").read_text(), "  builder: brokenmodel:build", "brokenmodel:build")
    assert broken == f"FAIL broken.yaml:{where}: model.builder: ValueError: the builder is broken (first run)"
    # The script's own one-line error, as is.
    assert missing.startswith("FAIL missing.yaml: error: nowhere:build: no module nowhere in ")
    assert missing.endswith("(sys.path, the working directory, the spec's folder) (first run)")
    assert result.stderr.strip().splitlines()[-1].startswith("smoke: 1 passed, 2 failed in ")
    assert "Traceback" not in result.stdout + result.stderr
    # Nothing written beside the specs: no run folder, no cache file (moved to the temporary folder).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.yaml", "brokenmodel.py", "good.yaml", "missing.yaml"]


@pytest.mark.slow
def test_a_hung_script_times_out_and_its_process_group_is_killed(tmp_path):
    (tmp_path / "hanging.py").write_text(
        "import pathlib, subprocess, time\n"
        "def build():\n"
        "    child = subprocess.Popen(['sleep', '300'])\n"
        "    pathlib.Path('child.pid').write_text(str(child.pid))\n"
        "    time.sleep(300)\n"
    )
    result = run_tfgen("smoke", _spec(tmp_path, "hang", builder="hanging:build"), "--timeout", "15", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "FAIL hang.yaml: timed out after 15 s (first run; killed)"
    child = int((tmp_path / "child.pid").read_text())
    state = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(child)], capture_output=True, text=True, check=False
    ).stdout.strip()
    assert state in ("", "Z"), f"the script's child {child} still runs ({state})"


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """Whether `pid` has ended (or is a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        state = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
        ).stdout.strip()
        if state in ("", "Z"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _started_pids(path, smoke, seconds=180.0) -> list[int]:
    """The pids the hanging builder wrote (the training process, its child), once it has."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and smoke.poll() is None:
        pids = path.read_text().split() if path.exists() else []
        if len(pids) == 2:
            return [int(pid) for pid in pids]
        time.sleep(0.2)
    raise AssertionError(f"the training process never started (smoke exit {smoke.poll()})")


@pytest.mark.slow
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_kills_the_running_scripts_and_removes_the_temporary_folder(tmp_path, number):
    """A cancelled CI job (SIGTERM) or a dropped session (SIGHUP) stops smoke as Ctrl-C does."""
    (tmp_path / "hanging.py").write_text(
        "import os, pathlib, subprocess, time\n"
        "def build():\n"
        "    child = subprocess.Popen(['sleep', '300'])\n"
        "    pathlib.Path('pids.partial').write_text(f'{os.getpid()} {child.pid}')\n"
        "    pathlib.Path('pids.partial').replace('pids')\n"
        "    time.sleep(300)\n"
    )
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    command = [sys.executable, "-m", "tfgen", "smoke", _spec(tmp_path, "hang", builder="hanging:build")]
    smoke = subprocess.Popen(
        command,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(temporary)},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pids = []
    try:
        pids = _started_pids(tmp_path / "pids", smoke)
        assert [p.name for p in temporary.glob("tfgen-smoke-*")], "no temporary folder while the script runs"
        stopped = time.monotonic()
        smoke.send_signal(number)
        out, err = smoke.communicate(timeout=30)
        assert time.monotonic() - stopped < 15
        assert smoke.returncode == 128 + number, out + err
        assert err.strip().splitlines()[-1] == f"smoke: stopped by {signal.Signals(number).name}"
        assert "Traceback" not in err
        left = [pid for pid in pids if not _gone(pid)]
        assert not left, f"the training process or its child still runs: {left}"
        assert list(temporary.glob("tfgen-smoke-*")) == []
    finally:
        smoke.kill()
        for pid in pids:  # cleanup of a failed run: what this test started and still runs
            if not _gone(pid, seconds=0):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["specs/digits.yaml", "--steps", "0"],
        ["specs/digits.yaml", "--timeout", "soon"],
        ["specs/digits.yaml", "--jobs", "-1"],
        ["specs/digits.yaml", "--timeout", "nan"],
    ],
)
def test_usage_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["smoke", *args])
    assert exited.value.code == 2
    assert "tfgen: error:" in capsys.readouterr().err


def test_invalid_spec_exits_2_located_and_runs_nothing(tmp_path, capsys, monkeypatch):
    spec = base_spec()
    spec["train"]["epochs"] = "many"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "Popen", None)  # running anything would raise
    assert main(["smoke", "bad.yaml", str(ROOT / "specs" / "digits.yaml")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("bad.yaml:") and "train.epochs" in err
    assert sorted(os.listdir(tmp_path)) == ["bad.yaml"]


def _position(text, line, value):
    """`line:column` (1-based) of `value` on the first line of `text` equal to `line`."""
    number = text.splitlines().index(line)
    return f"{number + 1}:{line.index(value) + 1}"


def _failure(tmp_path, stderr, builder=None):
    text = yaml.safe_dump(
        base_spec(model={"inputs": {"features": {"shape": [8]}}, "builder": builder}) if builder else base_spec(),
        sort_keys=False,
    )
    doc = load_text(text, "x.yaml")
    script = tmp_path / "x.py"
    smoke = Smoke("x.yaml", doc, validate(doc), script, tmp_path / "run")
    return text, first_error(smoke, subprocess.CompletedProcess([], 1, "", stderr.replace("SCRIPT", str(script))))


TRACEBACK = """I0000 00:00:1795995615.221779    7182 cudart_stub.cc:31] Could not find cuda drivers
Traceback (most recent call last):
  File "SCRIPT", line 240, in <module>
    rt.run(main)
  File "SCRIPT", line {line}, in {function}
    model = rt.function("m:build", SPEC_DIR, "builder")()
  File "/somewhere/m.py", line 2, in build
    raise ValueError('broken')
ValueError: broken
"""


def test_first_error_locates_a_traceback_by_the_generated_function_it_left(tmp_path):
    text, line = _failure(tmp_path, TRACEBACK.format(line=90, function="build_model"), builder="m:build")
    assert line == f"x.yaml:{_position(text, '  builder: m:build', 'm:build')}: model.builder: ValueError: broken"
    text, line = _failure(tmp_path, TRACEBACK.format(line=90, function="build_optimizer"))
    assert line == f"x.yaml:{_position(text, '  type: Adam', 'type')}: optimizer: ValueError: broken"
    _, line = _failure(tmp_path, TRACEBACK.format(line=90, function="train_step"))
    assert line == "x.yaml: ValueError: broken (in the script's train_step)"
    graph_error = (
        'Traceback (most recent call last):\n  File "SCRIPT", line 9, in train_step\n    x = 1\n'
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes\n\t [[{{node add}}]]\n"
    )
    _, line = _failure(tmp_path, f"ValueError: first\n\nDuring handling of the above exception:\n\n{graph_error}")
    assert line == (
        "x.yaml: tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes "
        "(in the script's train_step)"
    )
    _, line = _failure(tmp_path, "I0000 noise\nerror: m:load: labels outside [0, 3)\n")
    assert line == "x.yaml: error: m:load: labels outside [0, 3)"
    assert _failure(tmp_path, "")[1] == "x.yaml: exit code 1, nothing on stderr"


def test_a_module_named_like_the_generated_script_is_refused_located(tmp_path, capsys):
    """x.py would import itself for `x:build` (its folder is on sys.path): found at build time."""
    spec = base_spec(model={"inputs": {"features": {"shape": [8]}}, "builder": "hang.models:build"})
    (tmp_path / "hang.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["build", str(tmp_path / "hang.yaml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "model.builder: module `hang` has the name of the script this spec generates (hang.py)" in err
    assert not (tmp_path / "out").exists()


def test_pre_commit_hook_runs_smoke_in_the_manual_stage_with_the_train_extra():
    import tomllib

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    smoke = hooks["tfgen-smoke"]
    assert smoke["entry"] == "tfgen smoke" and smoke["stages"] == ["manual"] and smoke["pass_filenames"]
    train = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["train"]
    assert smoke["additional_dependencies"] == train


ROW1, ROW2 = {"epoch": 1, "loss": 2.3}, {"epoch": 2, "loss": 2.2}
NO_CHECKPOINT = "x.yaml: the first run did not end with one epoch and a checkpoint (1 history row(s), 0 checkpoint(s))"


@pytest.mark.parametrize(
    "case", ["resumed", "no resume line", "another checkpoint", "history rewritten", "no checkpoint", "resume never"]
)
def test_judge_passes_only_a_real_resume(tmp_path, case):
    """The verdict on a run folder: only a second run that resumed from the first's checkpoint passes."""
    import json

    spec = base_spec(checkpoint={"resume": "never"}) if case == "resume never" else base_spec()
    doc = load_text(yaml.safe_dump(spec), "x.yaml")
    smoke = Smoke("x.yaml", doc, validate(doc), tmp_path / "x.py", tmp_path / "run")
    (tmp_path / "run").mkdir()
    saved = [] if case == "no checkpoint" else ["ckpt-4.index"]
    (tmp_path / "first_run.json").write_text(json.dumps({"history": [ROW1], "checkpoints": saved}))
    rows = [{**ROW1, "loss": 9.0}, ROW2] if case == "history rewritten" else [ROW1, ROW2]
    (tmp_path / "run" / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    checkpoint = "ckpt-9" if case == "another checkpoint" else "ckpt-4"
    line = (
        "" if case == "no resume line" else f"Resuming from {tmp_path}/run/checkpoints/{checkpoint} (epoch 2, step 0)\n"
    )
    stdout = f"Epoch 1/1 - ...\ntfgen-smoke: resuming\n{line}Epoch 2/2 - ...\n"
    outcome = judge(smoke, subprocess.CompletedProcess([], 0, stdout, ""), "1.0 s")
    expected = {
        "resumed": (True, "x.yaml (saved at epoch 1, resumed to epoch 2; 1.0 s)"),
        "resume never": (True, "x.yaml (saved at epoch 1; checkpoint.resume: never: no resume; 1.0 s)"),
        "no checkpoint": (False, NO_CHECKPOINT),
    }
    failed = (False, "x.yaml: the second run did not resume from the first's checkpoint (history epochs [1, 2])")
    assert (outcome.passed, outcome.message) == expected.get(case, failed)


def test_scripts_run_on_the_cpu_as_one_local_worker(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}}')
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    env = Runner(steps=2, timeout=10).env
    assert "TF_CONFIG" not in env and env["CUDA_VISIBLE_DEVICES"] == "-1"


@pytest.mark.parametrize("set_by_user", [False, True])
def test_mixed_float16_scripts_run_without_onednn_unless_the_environment_says(monkeypatch, set_by_user):
    if set_by_user:
        monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "1")
    else:
        monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    runner = Runner(steps=2, timeout=10)
    mixed = load_spec(ROOT / "specs" / "cifar.yaml", []).spec
    float32 = load_spec(ROOT / "specs" / "digits.yaml", []).spec
    assert (mixed.precision, float32.precision) == ("mixed_float16", "float32")
    assert runner.env_for(mixed).get("TF_ENABLE_ONEDNN_OPTS") == ("1" if set_by_user else "0")
    assert runner.env_for(float32) == runner.env
