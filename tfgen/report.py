"""`tfgen report RUN_DIR [RUN_DIR...]`: report.html of run folders, drawn by the runtime
(tfgen_runtime.run_report, imported here only: it needs the training stack's matplotlib), with
what differs between the runs' specs (read here: the runtime reads no spec)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tfgen.errors import SpecError, UsageError
from tfgen.paths import project_root, shown_path
from tfgen.spec.resolve import resolve, resolved_sha256

NEEDS_RUNTIME = 'error: tfgen report needs the training stack: pip install "tfgen[train]"'
MISSING = "-"  # a spec key one run's spec does not hold


def add_parser(commands) -> None:
    report = commands.add_parser(
        "report",
        description="Write report.html and its PNGs: each figure logged per epoch (training and validation on one "
        "plot), the learning rate, the phases' starts, each class target's confusion matrix (confusion.json); for "
        "several runs, their curves overlaid (one colour a run) and a table of their arguments, their best figures "
        "and the spec keys whose values differ. Example: tfgen report runs/a runs/b --out compare",
        help="write report.html of run folders: each figure per epoch, the learning rate, the phases, "
        "the confusion matrices; several runs overlaid, with what differs in their specs and their best figures",
    )
    report.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="a run's output folder")
    report.add_argument(
        "--out",
        type=Path,
        help="the folder of report.html and its PNGs (default: the run's folder; needed for several runs)",
    )


def run(args: argparse.Namespace) -> int:
    """Check every folder, then draw; 2 with one line when a folder is not a run."""
    for folder in args.runs:
        if not (folder / "history.jsonl").is_file():
            raise UsageError(f"{shown_path(folder)} is not a run folder: it holds no history.jsonl")
    if len(args.runs) > 1 and args.out is None:
        raise UsageError("several runs: give --out FOLDER for their report (each run keeps its own report.html)")
    try:
        path = write_runs_report(args.runs, args.out)
    except RuntimeMissing:
        print(NEEDS_RUNTIME, file=sys.stderr)
        return 2
    print(f"wrote {shown_path(path)}")
    return 0


class RuntimeMissing(Exception):
    """The training stack's runtime (which draws the report) is not installed."""


def write_runs_report(folders: list[Path], out: Path | None) -> Path:
    """Write report.html of the run folders (with what differs in their specs, for several)
    into `out`; its path. UsageError (one line) for a folder that is not a run or a missing
    matplotlib; RuntimeMissing without the runtime. `tfgen sweep` calls it for its top trials."""
    try:
        from tfgen_runtime.errors import UserError
        from tfgen_runtime.run_report import write_report
    except ImportError:  # not installed (or another version, without the report)
        raise RuntimeMissing(NEEDS_RUNTIME) from None
    differences = spec_differences(folders) if len(folders) > 1 else None
    try:
        return write_report(folders, out, differences)
    except UserError as error:
        raise UsageError(str(error)) from None
    except ImportError as error:  # matplotlib
        raise UsageError(f"{error}: pip install matplotlib") from None


def spec_differences(folders: list[Path]) -> dict:
    """The spec keys (flattened, `model.layers.0.units`) whose values differ between the runs
    whose specs are found with the sha256 their run.json records, and a note for each other."""
    flat, notes = {}, []
    labels = run_labels(folders)
    for folder, label in zip(folders, labels, strict=True):
        values = spec_values(folder)
        if isinstance(values, str):
            notes.append(f"{label}: {values}")
        else:
            flat[label] = values
    keys = sorted({key for values in flat.values() for key in values})
    differing = [key for key in keys if len({values.get(key, MISSING) for values in flat.values()}) > 1]
    table = {label: [flat[label].get(key, MISSING) for key in differing] for label in flat}
    return {"keys": differing, "values": table, "notes": notes}


def run_labels(folders: list[Path]) -> list[str]:
    """The runtime's labels of the runs (their folders' names, or paths where names repeat)."""
    from tfgen_runtime.run_report import labels

    return labels(folders)


def spec_values(folder: Path) -> dict | str:
    """The run's spec, flattened, when found with its recorded sha256; else why not."""
    try:
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        spec, sha = record["spec"], record["spec_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return "no run.json naming its spec: its spec is not compared"
    for path in candidates(folder, spec):
        try:
            doc = resolve(path, spec)
        except (SpecError, OSError):
            continue
        if resolved_sha256(doc) == sha:
            return dict(flatten(doc.data))
    return f"its spec {spec} is not found as it was (sha256 {sha[:12]}): its spec is not compared"


def candidates(folder: Path, spec: str) -> list[Path]:
    """Where a run's spec may be: its path (relative to the project it was built in) from
    here, from this project's root, and from the run folder's project's root."""
    roots = [Path.cwd(), project_root(Path.cwd().resolve()), project_root(folder.resolve())]
    return [root / spec for root in roots if (root / spec).is_file()]


def flatten(value, prefix: str = ""):
    """`(dotted key, JSON text)` of every leaf of a spec document."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from flatten(item, f"{prefix}{key}.")
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from flatten(item, f"{prefix}{index}.")
    else:
        yield prefix.removesuffix("."), json.dumps(value, default=str)
