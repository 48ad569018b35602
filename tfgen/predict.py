"""`tfgen predict RUN_DIR DATA` and `tfgen evaluate RUN_DIR DATA`: a run folder's final model
on new data, through the script that trained it (its `predict` and `evaluate` commands read
the data as its training data, with its own pipeline, losses and metrics).

The script is found from the run's run.json (its spec, by default built to generated/), and
must be the one generated from that spec as the run used it (the same SPEC_SHA256).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from tfgen.errors import UsageError
from tfgen.paths import project_root, shown_path

SPEC_SHA256 = re.compile(r'^SPEC_SHA256 = "([0-9a-f]{64})"$', re.MULTILINE)


def add_parsers(commands) -> None:
    what = {
        "predict": "write each example's predictions of a run's final model on new data (predictions.csv, "
        "or JSON lines with --out X.jsonl), read as the run's training data",
        "evaluate": "write the spec's losses and metrics of a run's final model on labelled data (evaluation.json)",
    }
    for name, help_text in what.items():
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument("run", type=Path, metavar="RUN_DIR", help="a finished run's folder")
        command.add_argument("data", metavar="DATA", help="the data: a file or folder of the training source's type")
        command.add_argument("--out", help="the file to write (default: in the run's folder)")
        if name == "predict":
            command.add_argument("--top-k", metavar="K", help="the K likeliest classes of each class target")
        script = "the run's script (default: generated/<spec name>.py, built from the spec run.json names)"
        command.add_argument("--script", type=Path, help=script)


def run(args: argparse.Namespace) -> int:
    """Run the script's command on the run folder; its exit code (its errors are one line)."""
    record = _run_record(args.run)
    _require_one_model(args.run)
    script = _script(args.run, record, args.script)
    command = [sys.executable, str(script), args.command, args.data, "--output-dir", str(args.run)]
    if args.out:
        command += ["--out", args.out]
    if getattr(args, "top_k", None):
        command += ["--top-k", args.top_k]
    return subprocess.run(command, check=False).returncode


def _run_record(folder: Path) -> dict:
    path = folder / "run.json"
    if not path.is_file():
        raise UsageError(f"{shown_path(folder)} is not a run folder: it holds no run.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{shown_path(path)}: cannot be read: {error}") from None


def _require_one_model(folder: Path) -> None:
    """UsageError unless the run exported its final model (model.keras)."""
    if (folder / "model.keras").is_file():
        return
    networks = sorted(path.name for path in folder.glob("*.keras"))
    if networks:
        raise UsageError(f"{shown_path(folder)}: no single model to predict with; its networks: {', '.join(networks)}")
    raise UsageError(f"{shown_path(folder)}: no trained model (model.keras): train it first")


def _script(folder: Path, record: dict, given: Path | None) -> Path:
    """The script that trained the run: given, else generated/<spec stem>.py; it must hold the
    run's SPEC_SHA256."""
    spec = str(record.get("spec", ""))
    script = given or project_root(Path.cwd().resolve()) / "generated" / f"{Path(spec).stem}.py"
    if not script.is_file():
        build = f"tfgen build {spec}" if spec else "build it"
        raise UsageError(
            f"{shown_path(script)}: no such script for the run {shown_path(folder)}: {build} (or pass --script)"
        )
    found = SPEC_SHA256.search(script.read_text(encoding="utf-8", errors="replace"))
    if found is None or found[1] != record.get("spec_sha256"):
        raise UsageError(
            f"{shown_path(script)} was not generated from the spec of the run {shown_path(folder)} "
            f"({spec or 'unknown'} as it was then): rebuild it from that spec, or pass --script"
        )
    return script
