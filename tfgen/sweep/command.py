"""`tfgen sweep SPEC`: run a hyperparameter search over a spec with Optuna (docs/sweeps.md).

Each worker (this command, on one machine or many sharing `--storage`) takes trials until the
study holds `--trials` of them, runs each as an ordinary tfgen run, then, unless `--worker`,
prints the table of trials and writes trials.csv, best.yaml and report.html (the top trials').
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from tfgen.errors import UsageError

INSTALL = 'tfgen sweep needs Optuna: pip install "tfgen[sweep]" (optuna, psycopg)'


def add_parser(commands) -> None:
    sweep = commands.add_parser("sweep", help="search hyperparameters of a spec with Optuna, one run per trial")
    sweep.add_argument("spec", type=Path, metavar="SPEC")
    sweep.add_argument("--trials", type=_count, metavar="N", help="trials in the study, over all workers")
    sweep.add_argument(
        "--space",
        action="append",
        default=[],
        metavar="PATH=EXPRESSION",
        help="a dimension: log(a,b), uniform(a,b), int(a,b) or [x,y,...], e.g. "
        '"optimizer.learning_rate=log(1e-4,1e-2)" (repeatable; added to the spec\'s sweep.space)',
    )
    sweep.add_argument("--monitor", help="the history figure to rank trials by (default: val_loss)")
    sweep.add_argument("--mode", choices=("min", "max"), help="whether lower or higher is better (default min)")
    sweep.add_argument("--dir", type=Path, default=Path("sweeps"), help="sweeps/<name>/ holds the trials")
    sweep.add_argument(
        "--storage", help="the study's database URL, e.g. postgresql://user@host/db (default: sqlite <dir>/study.db)"
    )
    sweep.add_argument(
        "--worker", action="store_true", help="run trials only: no table, trials.csv, best.yaml or report.html"
    )
    sweep.add_argument("--trust", action="store_true", help="passed on to each trial's script (see build --help)")
    sweep.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a spec field for every trial (repeatable)",
    )


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    from tfgen.spec.load import load_spec
    from tfgen.sweep.settings import settings

    found = settings(load_spec(args.spec, args.overrides), args)  # a bad spec or space: before Optuna
    try:
        import optuna
    except ImportError:
        raise UsageError(INSTALL) from None
    from tfgen.sweep.summary import write_summary

    _quiet(optuna)
    sweep_dir = args.dir / found.name
    sweep_dir.mkdir(parents=True, exist_ok=True)
    study = _open(found, sweep_dir, args.storage)
    try:
        ran = _work(found, sweep_dir, study, args.trust)
    except KeyboardInterrupt:  # the trial's script saved on the same Ctrl-C (or on our SIGTERM)
        print("tfgen sweep: interrupted; the trial in progress saved a checkpoint: run the same command to resume it")
        return 130
    print(f"{ran} trial(s) run here; the study holds {found.trials}")
    if not args.worker:
        print(write_summary(found, study, sweep_dir), end="")
    return 0


def _quiet(optuna) -> None:
    """No log lines per trial, nor warnings that heartbeats are experimental or meant for optimize()."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")


def _open(found, sweep_dir: Path, storage: str | None):
    import optuna
    import sqlalchemy.exc

    from tfgen.sweep.study import default_storage, open_study

    pruner = optuna.pruners.MedianPruner(n_startup_trials=found.startup_trials, n_warmup_steps=found.warmup_epochs)
    sampler = optuna.samplers.TPESampler(seed=found.seed)
    url = storage or default_storage(sweep_dir)
    direction = "minimize" if found.mode == "min" else "maximize"
    try:
        study = open_study(url, found.name, direction, sampler, pruner)
    except (sqlalchemy.exc.SQLAlchemyError, ImportError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UsageError(f"--storage {_hidden(url)}: cannot open the study: {reason}") from None
    if study.direction.name.lower() != direction:
        raise UsageError(f"the study `{found.name}` in {_hidden(url)} has direction {study.direction.name.lower()}")
    return study


def _hidden(url: str) -> str:
    """`url` without its password."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    return f"{scheme}{sep}{credentials.split(':')[0]}@{host}"


def _work(found, sweep_dir: Path, study, trust: bool) -> int:
    """Run trials until the study holds `found.trials`; how many ran here."""
    from tfgen.sweep import study as shared
    from tfgen.sweep.trials import run_trial

    ran = 0
    while True:
        shared.retry_stale(study)
        if not shared.work_left(study, found.trials):
            return ran
        trial = study.ask()
        if not shared.claim(study, trial, found.trials):
            return ran
        folder = trial.user_attrs[shared.FOLDER]
        print(f"{folder}: {_values(trial, found)}", flush=True)
        outcome = run_trial(found, sweep_dir, study, trial, trust)
        figure = "-" if outcome.value is None else f"{outcome.value:.6g}"
        print(
            f"{folder}: {outcome.state.lower()} after {outcome.epochs} epoch(s), {found.monitor} {figure}", flush=True
        )
        ran += 1


def _values(trial, found) -> str:
    return ", ".join(f"{param.path}={param.suggest(trial)!r}" for param in found.params)
