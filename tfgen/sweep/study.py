"""The Optuna study a sweep's workers share: its storage, which trial each worker runs next, and
the retry of a trial whose worker died.

Every trial has a folder, `trial_NNNN`, numbered by the trials counted before it (0 to N-1). A trial whose
worker died (a dead process on this machine, or no heartbeat for GRACE_SECONDS from another) is
failed and enqueued again with the same values and folder, so that its run resumes from its
checkpoint. A new trial beyond the sweep's count (two workers asked at once) is told failed and
marked surplus: it never runs, and the table leaves it out.
"""

from __future__ import annotations

import inspect
import os
import random
import socket
import time
from pathlib import Path

import optuna
import sqlalchemy.exc
from optuna.storages import RDBStorage
from optuna.trial import FrozenTrial, TrialState

HEARTBEAT_SECONDS = 10  # each running trial's worker says it is alive this often
GRACE_SECONDS = 60  # a trial silent this long, run elsewhere, is retried
OPEN_ATTEMPTS = 5
FOLDER, WORKER, SURPLUS, EXIT = "tfgen_folder", "tfgen_worker", "tfgen_surplus", "tfgen_exit"


def default_storage(folder: Path) -> str:
    return f"sqlite:///{(folder / 'study.db').resolve()}"


def open_study(storage_url: str, name: str, direction: str, sampler, pruner) -> optuna.Study:
    """The study `name` in `storage_url`, created by the first worker that opens it."""
    storage_url = with_driver(storage_url)
    engine = {"connect_args": {"timeout": 120}} if storage_url.startswith("sqlite") else {}
    callback = "heartbeat_stale_trial_callback"
    if callback not in inspect.signature(RDBStorage.__init__).parameters:
        callback = "failed_trial_callback"  # Optuna 4
    for attempt in range(OPEN_ATTEMPTS):
        try:
            storage = RDBStorage(
                storage_url,
                engine_kwargs=engine,
                heartbeat_interval=HEARTBEAT_SECONDS,
                grace_period=GRACE_SECONDS,
                **{callback: retry},
            )
            return optuna.create_study(
                storage=storage,
                study_name=name,
                direction=direction,
                sampler=sampler,
                pruner=pruner,
                load_if_exists=True,
            )
        except sqlalchemy.exc.SQLAlchemyError:  # workers starting at once race to create the tables
            if attempt == OPEN_ATTEMPTS - 1:
                raise
            time.sleep(0.5 + random.random())
    raise AssertionError  # unreachable


def with_driver(url: str) -> str:
    """A PostgreSQL URL naming the driver tfgen[sweep] installs (psycopg 3; SQLAlchemy 2.0 would
    take psycopg2 for a plain `postgresql://`)."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.partition("://")[2]
    return url


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def retry_stale(study: optuna.Study) -> None:
    """Fail and enqueue again each running trial whose worker is gone."""
    optuna.storages.fail_stale_trials(study)  # no heartbeat: another machine's, or ours
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if _dead_here(trial.user_attrs.get(WORKER, "")):
            _fail_and_retry(study, trial)


def _dead_here(worker: str) -> bool:
    """Whether `worker` (host:pid) is a process of this machine that no longer runs."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    return not alive(int(pid))


def alive(pid: int) -> bool:
    """Whether process `pid` runs here (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in "ZX"


def _fail_and_retry(study: optuna.Study, trial: FrozenTrial) -> None:
    """Only the worker whose update fails the trial enqueues its retry (others see it finished)."""
    try:
        if not study._storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL):
            return
    except (optuna.exceptions.UpdateFinishedTrialError, optuna.exceptions.StorageInternalError):
        return
    retry(study, study._storage.get_trial(trial._trial_id))


def retry(study: optuna.Study, trial: FrozenTrial) -> None:
    """Enqueue `trial` (failed, its worker gone) again: its values and attributes, so its folder."""
    again = optuna.trial.create_trial(
        state=TrialState.WAITING,
        params=trial.params,
        distributions=trial.distributions,
        user_attrs=trial.user_attrs,
        system_attrs={**trial.system_attrs, "failed_trial": trial.number},
    )
    study.add_trial(again)


def is_retry(trial: FrozenTrial) -> bool:
    return "failed_trial" in trial.system_attrs


def counted(trials: list[FrozenTrial]) -> list[FrozenTrial]:
    """The sweep's trials: first attempts, surplus ones left out."""
    return [t for t in trials if not is_retry(t) and not t.user_attrs.get(SURPLUS)]


def work_left(study: optuna.Study, wanted: int) -> bool:
    """Whether a trial waits to be retried, or fewer than `wanted` were started."""
    trials = study.get_trials(deepcopy=False)
    return any(t.state == TrialState.WAITING for t in trials) or len(counted(trials)) < wanted


def claim(study: optuna.Study, trial: optuna.Trial, wanted: int) -> bool:
    """Whether `trial` (just asked) is one of the sweep's `wanted`: a retry, or a new trial with
    fewer than `wanted` counted trials numbered before it. Otherwise it is told failed, surplus."""
    frozen = study._storage.get_trial(trial._trial_id)
    if is_retry(frozen):
        return True
    before = [t for t in counted(study.get_trials(deepcopy=False)) if t.number < trial.number]
    if len(before) < wanted:
        trial.set_user_attr(FOLDER, f"trial_{len(before):04d}")  # 0 to wanted - 1, retries aside
        return True
    trial.set_user_attr(SURPLUS, True)
    study.tell(trial, state=TrialState.FAIL)
    return False


def heartbeat(study: optuna.Study, trial: optuna.Trial) -> None:
    study._storage.record_heartbeat(trial._trial_id)
