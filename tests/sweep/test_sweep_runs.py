"""`tfgen sweep` end to end: real driver processes, real trial scripts, real Optuna storage
(SQLite, and a PostgreSQL server started here)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
import yaml
from conftest import base_spec, read_history, snapshot, tfgen_here, without_train_env

from tfgen.sweep.study import with_driver

pytestmark = pytest.mark.slow
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
SPACE = ["--space", "optimizer.learning_rate=log(1e-3,1e-1)", "--space", "model.layers.0.units=[8,16]"]


def small_spec(examples: int = 128, epochs: int = 2, **sweep) -> dict:
    spec = base_spec(train={"epochs": epochs})
    spec["data"]["train"]["source"]["examples"] = examples
    if sweep:
        spec["sweep"] = sweep
    return spec


def write_spec(folder: Path, spec: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "small.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "small.yaml"


def sweep(folder: Path, *args: str, **popen) -> subprocess.Popen:
    command = [sys.executable, "-m", "tfgen", "sweep", "small.yaml", *args]
    popen = {"env": ENV, **popen}
    return subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def finished(process: subprocess.Popen, timeout: float = 600) -> str:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, out[-3000:] + err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    return out


def trials_of(storage: str, name: str = "small") -> list[optuna.trial.FrozenTrial]:
    return optuna.load_study(study_name=name, storage=with_driver(storage)).get_trials()


def assert_n_trials_once_each(folder: Path, storage: str, n: int) -> list[optuna.trial.FrozenTrial]:
    """The study ran `n` trials, each in its own folder, each to its end, none twice."""
    complete = [t for t in trials_of(storage) if t.state == optuna.trial.TrialState.COMPLETE]
    folders = sorted(t.user_attrs["tfgen_folder"] for t in complete)
    assert folders == [f"trial_{i:04d}" for i in range(n)]
    assert sorted(p.name for p in (folder / "sweeps" / "small").glob("trial_*")) == folders
    for trial in complete:
        identity = json.loads(
            (folder / "sweeps" / "small" / trial.user_attrs["tfgen_folder"] / "trial.json").read_text()
        )
        assert identity["params"] == trial.params
        assert identity["state"] == "COMPLETE"
        assert identity["value"] == trial.value
    return complete


@pytest.fixture(scope="module")
def two_sqlite_workers(tmp_path_factory):
    """Two workers on one SQLite study of 3 trials, then the summary (no trial left to run),
    where matplotlib imports (tests/train_env blocks it elsewhere) to draw the report."""
    folder = tmp_path_factory.mktemp("sqlite_sweep")
    write_spec(folder, small_spec())
    workers = [sweep(folder, "--trials", "3", "--worker", *SPACE) for _ in range(2)]
    outputs = [finished(worker) for worker in workers]
    summary = finished(sweep(folder, "--trials", "3", *SPACE, env=without_train_env(ENV)))
    return folder, outputs, summary


def test_two_workers_on_one_sqlite_study_run_exactly_n_trials_once_each(two_sqlite_workers):
    folder, outputs, summary = two_sqlite_workers
    storage = f"sqlite:///{folder / 'sweeps' / 'small' / 'study.db'}"
    assert_n_trials_once_each(folder, storage, 3)
    ran = [int(re.search(r"(\d+) trial\(s\) run here", out).group(1)) for out in outputs]
    assert sum(ran) == 3
    assert "0 trial(s) run here" in summary
    csv = (folder / "sweeps" / "small" / "trials.csv").read_text().splitlines()
    assert csv[0] == "trial,state,val_loss,epochs,optimizer.learning_rate,model.layers.0.units"
    assert [line.split(",")[:2] for line in csv[1:]] == [[f"trial_{i:04d}", "COMPLETE"] for i in range(3)]
    for line in csv[1:]:
        assert line.split(",")[0] in summary


def test_best_yaml_reproduces_the_best_trial(two_sqlite_workers):
    folder, _, summary = two_sqlite_workers
    trials = trials_of(f"sqlite:///{folder / 'sweeps' / 'small' / 'study.db'}")
    best = min((t for t in trials if t.value is not None), key=lambda t: t.value)
    best_folder = folder / "sweeps" / "small" / best.user_attrs["tfgen_folder"]
    assert f"best: {best_folder.name}" in summary
    result = tfgen_here("build", "sweeps/small/best.yaml", "--out", "rebuilt", cwd=folder)
    assert result.returncode == 0, result.stderr
    rebuilt = (folder / "rebuilt" / "best.py").read_text()
    original = (best_folder / "generated" / "small.py").read_text()
    for constant in ("SPEC_SHA256", "STATE_SHA256"):
        line = re.compile(rf"^{constant} = .*$", re.MULTILINE)
        assert line.search(rebuilt).group() == line.search(original).group()
    spec = yaml.safe_load((folder / "sweeps" / "small" / "best.yaml").read_text())
    assert spec["optimizer"]["learning_rate"] == best.params["optimizer.learning_rate"]
    assert spec["model"]["layers"][0]["units"] == best.params["model.layers.0.units"]
    assert "sweep" not in spec


def test_the_sweep_ends_with_a_report_of_its_top_trials(two_sqlite_workers):
    """report.html beside best.yaml: `tfgen report` of the best completed trials, best first."""
    folder, _, summary = two_sqlite_workers
    trials = trials_of(f"sqlite:///{folder / 'sweeps' / 'small' / 'study.db'}")
    ranked = sorted((t for t in trials if t.value is not None), key=lambda t: t.value)
    top = [t.user_attrs["tfgen_folder"] for t in ranked[:3]]
    assert f"report of the top 3 trial(s) ({', '.join(top)}): sweeps/small/report.html" in summary
    page = (folder / "sweeps" / "small" / "report.html").read_text()
    places = [page.index(f"{name}/run") for name in top]  # labelled by the parts that differ
    assert places == sorted(places)  # the runs in the order of their figures
    assert "optimizer.learning_rate" in page  # the table of what differs in their specs
    images = re.findall(r'src="([^"]+\.png)"', page)
    assert images and all((folder / "sweeps" / "small" / image).stat().st_size > 0 for image in images)


def wait_for(condition, timeout: float = 300, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process is None or process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def rows(history: Path) -> int:
    return len(history.read_text().splitlines()) if history.exists() else 0


def test_a_sweep_killed_mid_trial_resumes_it_without_repeating_a_finished_one(tmp_path):
    write_spec(tmp_path, small_spec(examples=4096, epochs=3))
    driver = sweep(tmp_path, "--trials", "2", *SPACE)
    sweep_dir = tmp_path / "sweeps" / "small"
    wait_for(lambda: rows(sweep_dir / "trial_0001" / "run" / "history.jsonl") >= 1, process=driver)
    first = snapshot(sweep_dir / "trial_0000")
    driver.send_signal(signal.SIGKILL)  # the driver only: its trial's script is told by the kernel
    driver.communicate()
    storage = f"sqlite:///{sweep_dir / 'study.db'}"
    running = [t for t in trials_of(storage) if t.state == optuna.trial.TrialState.RUNNING]
    assert [t.user_attrs["tfgen_folder"] for t in running] == ["trial_0001"]
    out = finished(sweep(tmp_path, "--trials", "2", *SPACE))
    assert "trial_0000" not in out.split("trial  ")[0]  # not run again (only in the table)
    assert_n_trials_once_each(tmp_path, storage, 2)
    assert snapshot(sweep_dir / "trial_0000") == first
    log = (sweep_dir / "trial_0001" / "output.log").read_text()
    assert "Stopped by SIGTERM" in log
    assert "Resuming from" in log
    history = read_history(sweep_dir / "trial_0001" / "run")
    assert [row["epoch"] for row in history] == [1, 2, 3]
    retried = [t for t in trials_of(storage) if t.user_attrs["tfgen_folder"] == "trial_0001"]
    assert [t.state.name for t in retried] == ["FAIL", "COMPLETE"]
    assert retried[0].params == retried[1].params


def test_pruning_stops_a_trial_whose_figures_are_bad(tmp_path):
    # Seed 6 draws 0.01, 0.01, then 50.0 (asserted below): two trials finish, the third is bad.
    # 12,288 examples: an epoch of 4,096 took some 20 ms in memory after the first, and the last 3
    # ended before the pruner's SIGTERM (polling every 0.2 s) arrived, once in a loaded suite.
    space = {"optimizer.learning_rate": [0.01, 50.0]}
    write_spec(tmp_path, small_spec(examples=12288, epochs=4, space=space, seed=6, startup_trials=2))
    out = finished(sweep(tmp_path, "--trials", "3"))
    storage = f"sqlite:///{tmp_path / 'sweeps' / 'small' / 'study.db'}"
    trials = trials_of(storage)
    assert [t.params["optimizer.learning_rate"] for t in trials] == [0.01, 0.01, 50.0]
    assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE", "PRUNED"]
    pruned = tmp_path / "sweeps" / "small" / "trial_0002"
    identity = json.loads((pruned / "trial.json").read_text())
    assert identity["state"] == "PRUNED"
    assert identity["exit_code"] == 128 + signal.SIGTERM  # the script saved and exited on SIGTERM
    assert len(read_history(pruned / "run")) < 4
    assert "Stopped by SIGTERM" in (pruned / "output.log").read_text()
    assert "trial_0002: pruned" in out
    csv = (tmp_path / "sweeps" / "small" / "trials.csv").read_text().splitlines()
    assert csv[3].startswith(f"trial_0002,PRUNED,{identity['value']!r},")  # its best epoch before it was stopped


def postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


@pytest.fixture
def postgres_server():
    """A PostgreSQL server of the Debian package, run by the `postgres` user (never as root) in a
    folder of its own on a free port: its URL, then stopped and removed."""
    import shutil
    import tempfile

    from tfgen.cluster.launch import free_ports

    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server installed (.ci/run installs the Debian package)")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="tfgen-pg-"))
    data = home / "data"
    if as_user:
        shutil.chown(home, "postgres")
    port = free_ports(1)[0]

    def run(*command: str) -> None:
        result = subprocess.run([*as_user, *command], capture_output=True, text=True, check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust")
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start")
    try:
        run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "sweeps")
        yield f"postgresql://postgres@127.0.0.1:{port}/sweeps"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(home, ignore_errors=True)


def test_two_workers_on_one_postgresql_study_run_exactly_n_trials_once_each(tmp_path, postgres_server):
    write_spec(tmp_path, small_spec())
    storage = ["--storage", postgres_server]
    workers = [sweep(tmp_path, "--trials", "3", "--worker", *storage, *SPACE) for _ in range(2)]
    for worker in workers:
        finished(worker)
    assert not (tmp_path / "sweeps" / "small" / "study.db").exists()
    assert_n_trials_once_each(tmp_path, postgres_server, 3)
    summary = finished(sweep(tmp_path, "--trials", "3", *storage, *SPACE))
    assert "0 trial(s) run here" in summary
    assert (tmp_path / "sweeps" / "small" / "best.yaml").exists()


def test_a_monitor_the_history_lacks_is_one_line_naming_the_figures_it_has(tmp_path):
    write_spec(tmp_path, small_spec())
    driver = sweep(tmp_path, "--trials", "2", "--monitor", "val_accuracy", *SPACE)
    out, err = driver.communicate(timeout=600)
    assert driver.returncode == 2, out + err
    assert err.count("\n") == 1, err
    assert err.startswith("tfgen: error: monitor `val_accuracy` is not in the run's history ")
    assert "(it has loss, sparse_categorical_accuracy, val_loss, val_sparse_categorical_accuracy" in err
    trials = trials_of(f"sqlite:///{tmp_path / 'sweeps' / 'small' / 'study.db'}")
    assert [t.state.name for t in trials] == ["FAIL"]  # told, not left running; no second trial
