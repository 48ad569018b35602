"""One trial: an ordinary tfgen run of the spec with the trial's values set, in its own folder
(`trial_NNNN/`: the spec, the generated script, `run/`, `trial.json`, `output.log`), run as a
process whose history the driver reads as it grows, reporting each epoch's figure to Optuna.

The script knows nothing of Optuna: a pruned trial is stopped by SIGTERM, on which the script
saves a checkpoint and exits; its process is also sent SIGTERM when the driver dies (Linux), so
that the trial's retry resumes from that checkpoint.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import optuna

from tfgen.errors import UsageError
from tfgen.generate.build import plan_targets, write_files
from tfgen.sweep import study as shared
from tfgen.sweep.settings import Settings, trial_text

POLL_SECONDS = 0.2
CHILD = "tfgen_child"  # host:pid of the trial's script
PR_SET_PDEATHSIG = 1
RUN_FOLDER = "run"  # the trial's run folder, inside its trial_NNNN folder


@dataclass
class Outcome:
    """How a trial ended: its state, best figure, epochs reported and the script's exit code."""

    state: str  # "COMPLETE", "PRUNED" or "FAIL"
    value: float | None
    epochs: int
    exit_code: int | None


def run_trial(settings: Settings, sweep_dir: Path, study: optuna.Study, trial: optuna.Trial, trust: bool) -> Outcome:
    """Build and run `trial` to its end, pruning it if Optuna says so; the outcome told to the study."""
    values = {param.path: param.suggest(trial) for param in settings.params}
    folder = sweep_dir / trial.user_attrs[shared.FOLDER]
    trial.set_user_attr(shared.WORKER, shared.worker_id())
    shared.heartbeat(study, trial)
    script = build_trial(settings, folder, values)
    identity = {"folder": folder.name, "optuna_number": trial.number, "study": settings.name, "params": values}
    write_json(folder / "trial.json", identity)
    wait_for_previous(trial.user_attrs.get(CHILD, ""))
    process = start(script, folder, trust)
    trial.set_user_attr(CHILD, f"{shared.worker_id().rpartition(':')[0]}:{process.pid}")
    try:
        outcome = watch(settings, study, trial, process, folder / RUN_FOLDER / "history.jsonl")
    except UsageError:
        trial.set_user_attr(shared.EXIT, process.returncode)
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        raise
    write_json(folder / "trial.json", {**identity, **outcome.__dict__})
    if outcome.state == "COMPLETE" and outcome.value is not None:
        study.tell(trial, outcome.value)
    else:
        trial.set_user_attr(shared.EXIT, outcome.exit_code)
        study.tell(trial, state=getattr(optuna.trial.TrialState, outcome.state))
    return outcome


def build_trial(settings: Settings, folder: Path, values: dict) -> Path:
    """Write the trial's spec and its generated script (the same bytes again on a retry)."""
    spec_path = folder / f"{settings.name}.yaml"
    header = f"Trial {folder.name} of the sweep of {settings.loaded.shown}, written by `tfgen sweep`."
    write_files([(spec_path, trial_text(settings.loaded.doc, values, header))])
    targets = plan_targets([spec_path], folder / "generated")
    write_files([(target.output, target.text) for target in targets])
    return targets[0].output


def start(script: Path, folder: Path, trust: bool) -> subprocess.Popen:
    """The trial's script, its output in output.log (appended on a retry), SIGTERM when we die."""
    command = [sys.executable, str(script), "--output-dir", str(folder / RUN_FOLDER), *(["--trust"] if trust else [])]
    log = open(folder / "output.log", "ab")  # noqa: SIM115 (the child holds it; closed below)
    try:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)  # noqa: PLW1509 (no threads here)
    finally:
        log.close()


def _die_with_parent() -> None:
    """In the child: SIGTERM when the driver's thread ends (Linux; elsewhere a no-op)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wait_for_previous(child: str, timeout: float = 120) -> None:
    """A retry's run waits for the process of the attempt before (host:pid), still saving after
    its driver died, to let go of the run folder."""
    host, _, pid = child.rpartition(":")
    deadline = time.monotonic() + timeout
    while host == shared.worker_id().rpartition(":")[0] and pid.isdigit() and shared.alive(int(pid)):
        if time.monotonic() > deadline:
            return
        time.sleep(POLL_SECONDS)


def watch(
    settings: Settings, study: optuna.Study, trial: optuna.Trial, process: subprocess.Popen, history: Path
) -> Outcome:
    """Report each new epoch of the run's history to `trial` until the process ends; SIGTERM it
    and say PRUNED as soon as Optuna would prune it."""
    figures: dict[int, float] = {}
    beat = time.monotonic()
    try:
        while True:
            ended = process.poll() is not None
            if report_new(settings, trial, history, figures):
                return _stopped(process, settings, figures, "PRUNED")
            if ended:
                break
            if time.monotonic() - beat > shared.HEARTBEAT_SECONDS / 2:
                shared.heartbeat(study, trial)
                beat = time.monotonic()
            time.sleep(POLL_SECONDS)
    except BaseException:  # Ctrl-C, SIGTERM or an error here: the run saves, a rerun resumes it
        _stop(process)
        raise
    state = "COMPLETE" if process.returncode == 0 and figures else "FAIL"
    return Outcome(state, best(settings, figures), len(figures), process.returncode)


def report_new(settings: Settings, trial: optuna.Trial, history: Path, figures: dict[int, float]) -> bool:
    """Report the epochs not reported yet; whether the trial should be pruned."""
    for row in read_rows(history):
        epoch = row.get("epoch")
        if not isinstance(epoch, int) or epoch in figures:
            continue
        if settings.monitor not in row:
            names = ", ".join(key for key in row if key != "epoch")
            raise UsageError(f"monitor `{settings.monitor}` is not in the run's history {history} (it has {names})")
        figures[epoch] = float(row[settings.monitor])
        trial.report(figures[epoch], epoch)
        if settings.pruner != "none" and trial.should_prune():
            return True
    return False


def read_rows(history: Path) -> list[dict]:
    """The rows of history.jsonl (rewritten whole by a rename: never half a file), [] before it exists."""
    try:
        text = history.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def best(settings: Settings, figures: dict[int, float]) -> float | None:
    finite = [value for value in figures.values() if math.isfinite(value)]
    if not finite:
        return None
    return min(finite) if settings.mode == "min" else max(finite)


def _stopped(process: subprocess.Popen, settings: Settings, figures: dict[int, float], state: str) -> Outcome:
    _stop(process)
    return Outcome(state, best(settings, figures), len(figures), process.returncode)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM: the script saves a checkpoint and exits; SIGKILL if it has not within a minute."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def write_json(path: Path, data: dict) -> None:
    write_files([(path, json.dumps(data, indent=2, sort_keys=True) + "\n")])
