"""The end of a sweep: its trials as a table (printed and `trials.csv`), `best.yaml`, the
spec with the best trial's values set (the same bytes as that trial's spec but the header), and
`report.html`, `tfgen report` of the best completed trials' runs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import optuna
from optuna.trial import FrozenTrial, TrialState

from tfgen.errors import UsageError
from tfgen.generate.build import write_files
from tfgen.paths import shown_path
from tfgen.sweep import study as shared
from tfgen.sweep.settings import Settings, trial_text
from tfgen.sweep.trials import RUN_FOLDER, best

TOP_TRIALS = 3  # the completed trials in the sweep's report.html


def rows(settings: Settings, study: optuna.Study) -> list[dict]:
    """One row per trial folder: its latest attempt's state, values and best figure."""
    latest: dict[str, FrozenTrial] = {}
    for trial in study.get_trials(deepcopy=False):
        if shared.FOLDER in trial.user_attrs and not trial.user_attrs.get(shared.SURPLUS):
            latest[trial.user_attrs[shared.FOLDER]] = trial  # attempts come in number order
    table = []
    for folder, trial in sorted(latest.items()):
        row = {"trial": folder, "state": trial.state.name, settings.monitor: best_figure(settings, trial)}
        row["epochs"] = len(trial.intermediate_values)
        row |= {param.path: trial.params.get(param.path) for param in settings.params}
        table.append(row)
    return table


def best_figure(settings: Settings, trial: FrozenTrial) -> float | None:
    """The trial's value, or for one stopped early (pruned, failed) the best epoch it reported."""
    if trial.value is not None:
        return trial.value
    return best(settings, dict(trial.intermediate_values))


def write_summary(settings: Settings, study: optuna.Study, sweep_dir: Path) -> str:
    """Write trials.csv and best.yaml (when a trial completed); the table as text."""
    table = rows(settings, study)
    text = io.StringIO()
    if table:
        writer = csv.DictWriter(text, fieldnames=list(table[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
    files = [(sweep_dir / "trials.csv", text.getvalue())]
    completed = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))]
    shown = format_table(table)
    if completed:
        winner = study.best_trial
        folder = winner.user_attrs[shared.FOLDER]
        header = (
            f"The best trial ({folder}, {settings.monitor} {winner.value:.6g}) of the sweep of "
            f"{settings.loaded.shown}, written by `tfgen sweep`.\nIts values: {json.dumps(winner.params)}"
        )
        values = {param.path: winner.params[param.path] for param in settings.params}
        files.append((sweep_dir / "best.yaml", trial_text(settings.loaded.doc, values, header)))
        shown += (
            f"\nbest: {folder} ({settings.monitor} {winner.value:.6g}); its spec: {shown_path(sweep_dir / 'best.yaml')}"
        )
    write_files(files)
    if completed:
        shown += "\n" + write_top_report(settings, completed, sweep_dir)
    return shown + "\n"


def write_top_report(settings: Settings, completed: list[FrozenTrial], sweep_dir: Path) -> str:
    """Write `tfgen report` of the best TOP_TRIALS completed trials' runs (best first) into the
    sweep folder; the line that says where, or why not (the table and best.yaml stand)."""
    from tfgen.report import RuntimeMissing, write_runs_report

    ranked = sorted(completed, key=lambda trial: trial.value, reverse=settings.mode == "max")[:TOP_TRIALS]
    folders = [trial.user_attrs[shared.FOLDER] for trial in ranked]
    try:
        path = write_runs_report([sweep_dir / folder / RUN_FOLDER for folder in folders], sweep_dir)
    except (UsageError, RuntimeMissing) as error:
        return f"no report of the top trials: {error}"
    return f"report of the top {len(folders)} trial(s) ({', '.join(folders)}): {shown_path(path)}"


def format_table(table: list[dict]) -> str:
    """The rows as aligned columns."""
    if not table:
        return "no trials yet"
    cells = [list(table[0])] + [[_cell(value) for value in row.values()] for row in table]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in cells
    )


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)
