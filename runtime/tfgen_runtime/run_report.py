"""The run report: report.html and its PNGs, of one run or several side by side.

Every logged figure per epoch (training solid, validation dashed, one colour a run), the
learning rate, the phases' boundaries, each class target's confusion matrix (confusion.json),
and a table of the runs: their arguments, best and test figures, and what differs in their
specs (given by `tfgen report`, which reads specs). matplotlib draws, imported on first use.
"""

import html
import json
import re
import sys
from pathlib import Path

from .confusion import CONFUSION_FILE
from .errors import UserError
from .regular_files import read_regular, write_whole

REPORT_FILE = "report.html"
IMAGES = "report"  # the folder of the PNGs, beside report.html
# Per-epoch values that are not figures to compare (the learning rate has its own plot).
NOT_FIGURES = (
    "epoch",
    "phase",
    "lr",
    "skipped_steps",
    "epoch_seconds",
    "examples_per_second",
    "input_wait",
)
# A figure whose name holds one of these is better lower; any other, higher.
LOWER_IS_BETTER = (
    "loss",
    "error",
    "mse",
    "mae",
    "crossentropy",
    "hinge",
    "divergence",
    "poisson",
)


class Run:
    """One run folder as the report reads it: history rows, run.json, and the optional
    test.json and confusion.json."""

    def __init__(self, folder, label):
        self.folder = Path(folder)
        self.label = label
        history = self.folder / "history.jsonl"
        if not history.is_file():
            raise UserError(f"{folder} is not a run folder: it holds no history.jsonl")
        text = read_regular(history).decode("utf-8", errors="replace")
        lines = [
            (n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()
        ]
        self.rows = [history_row(line, f"{history} line {n}") for n, line in lines]
        self.record = self.optional("run.json")
        self.test = self.optional("test.json")
        self.confusion = self.optional(CONFUSION_FILE)

    def optional(self, name):
        """A JSON file of the folder ({}: none, or not JSON)."""
        try:
            return json.loads(read_regular(self.folder / name))
        except (OSError, ValueError, UserError):
            return {}

    def series(self, key):
        """`(epochs, values)` of a history key (rows without it left out)."""
        points = [
            (row["epoch"], row[key])
            for row in self.rows
            if isinstance(row.get(key), (int, float))
        ]
        return [p[0] for p in points], [p[1] for p in points]

    def phase_starts(self):
        """The epochs at which a new phase starts (none: one phase)."""
        starts = []
        previous = None
        for row in self.rows:
            phase = row.get("phase")
            if previous is not None and phase != previous:
                starts.append(row["epoch"])
            previous = phase
        return starts


def history_row(line, where):
    """One row of history.jsonl (a dict with its `epoch`), or UserError naming `where`."""
    try:
        row = json.loads(line)
    except ValueError:
        row = None
    if not isinstance(row, dict) or not isinstance(row.get("epoch"), int):
        raise UserError(f"{where} is not a history row")
    return row


def figures(runs):
    """The figures logged per epoch, by name (`val_loss` is `loss`'s validation curve)."""
    names = []
    for key, value in (
        item for run in runs for row in run.rows for item in row.items()
    ):
        name = key.removeprefix("val_")
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if numeric and key not in NOT_FIGURES and name not in names:
            names.append(name)
    return names


def best(values, name):
    """The best of `values` for the figure `name` (None: no value)."""
    if not values:
        return None
    lower = any(word in name for word in LOWER_IS_BETTER)
    return min(values) if lower else max(values)


def labels(folders):
    """Each run's label: its folder's name, or where names repeat the fewest trailing parts
    of its path that tell the runs apart (`trial_0001/run`, not the whole path)."""
    paths = [Path(folder).resolve().parts for folder in folders]
    for depth in range(1, max(map(len, paths)) + 1):
        tails = ["/".join(parts[-depth:]) for parts in paths]
        if len(set(tails)) == len(tails):
            return tails
    return [str(folder) for folder in folders]


def write_report(folders, out=None, differences=None):
    """Write report.html and its PNGs for the run `folders` into `out` (default: the first
    run's folder); returns the page's path. `differences`: what differs in their specs,
    `{"keys": [...], "values": {label: [value per key]}, "notes": [...]}` (tfgen report's).

    UserError naming a folder that is not a run (no history.jsonl), before anything is written.
    """
    runs = [
        Run(folder, label)
        for folder, label in zip(folders, labels(folders), strict=True)
    ]
    out = Path(out) if out is not None else runs[0].folder
    images = out / IMAGES
    images.mkdir(parents=True, exist_ok=True)
    names = figures(runs)
    page = render(runs, names, sections(runs, names, images), differences)
    path = out / REPORT_FILE
    write_whole(path, page)
    return path


def sections(runs, names, images):
    """`(heading, [(PNG path, caption)])` of each part of the page, the PNGs drawn."""
    from . import report_plots  # matplotlib, on first use

    drawn = [
        (
            "Figures per epoch",
            [report_plots.curves(runs, name, images) for name in names],
        )
    ]
    if any(run.series("lr")[0] for run in runs):
        rate = report_plots.curves(runs, "lr", images, validation=False)
        drawn.append(("Learning rate", [rate]))
    targets = [
        (run, target) for run in runs for target in run.confusion.get("targets", {})
    ]
    if targets:
        matrices = [
            report_plots.confusion(run, target, images) for run, target in targets
        ]
        drawn.append(("Confusion matrices", matrices))
    return drawn


def report_run(run):
    """The report a script writes at the end of its run (on the chief): report.html in its
    folder, or one line on stderr when matplotlib cannot be imported (the run is done).
    """
    if not run.chief:
        return
    try:
        path = write_report([run.output])
    except ImportError as error:
        print(
            f"warning: {REPORT_FILE} not written: {error}: pip install matplotlib",
            file=sys.stderr,
        )
        return
    print(f"Report: {path}", flush=True)


def render(runs, names, sections, differences):
    """The page: the runs' table, the specs' differences, then each section's images."""
    title = "Report: " + ", ".join(run.label for run in runs)
    parts = [f"<h1>{escape(title)}</h1>", runs_table(runs, names)]
    if differences:
        parts.append(differences_table(differences))
    for heading, images in sections:
        parts.append(f"<h2>{escape(heading)}</h2>")
        parts += [image(*item) for item in images]
    body = "\n".join(parts)
    return PAGE.format(title=escape(title), body=body)


def runs_table(runs, names):
    """One row a run: its folder, spec, arguments, epochs, best figures and test figures."""
    head = ["run", "spec", "arguments", "epochs"]
    head += [f"best {key}" for name in names for key in (name, f"val_{name}")]
    head += [f"test {name}" for name in names]
    rows = []
    for run in runs:
        row = [
            run.label,
            run.record.get("spec", ""),
            " ".join(run.record.get("argv", [])),
            len(run.rows),
        ]
        row += [
            best(run.series(key)[1], name)
            for name in names
            for key in (name, f"val_{name}")
        ]
        row += [run.test.get(name) for name in names]
        rows.append(row)
    return table(head, rows, "runs")


def differences_table(differences):
    """The spec keys whose values differ between the runs, and the notes on specs not read."""
    labels_ = list(differences["values"])
    rows = [
        [key, *(differences["values"][label][i] for label in labels_)]
        for i, key in enumerate(differences["keys"])
    ]
    parts = ["<h2>What differs in the specs</h2>"]
    if rows:
        parts.append(table(["spec key", *labels_], rows, "differences"))
    parts += [
        f"<p class=note>{escape(note)}</p>" for note in differences.get("notes", [])
    ]
    return "\n".join(parts)


def table(head, rows, name):
    """An HTML table; numbers shown to 4 decimals, missing values as a dash."""
    cells = "".join(f"<th>{escape(cell)}</th>" for cell in head)
    lines = [f"<table class={name}><tr>{cells}</tr>"]
    for row in rows:
        lines.append(
            "<tr>"
            + "".join(f"<td>{escape(shown(cell))}</td>" for cell in row)
            + "</tr>"
        )
    lines.append("</table>")
    return "\n".join(lines)


def shown(value):
    """A table cell's text."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return value if isinstance(value, str) else json.dumps(value)


def image(path, caption):
    """A figure: the PNG (relative to the page) and its caption."""
    source = f"{IMAGES}/{path.name}"
    alt = escape(caption)
    return f'<figure><img src="{escape(source)}" alt="{alt}"><figcaption>{alt}</figcaption></figure>'


def escape(text):
    return html.escape(str(text), quote=True)


def file_name(text):
    """A PNG's name for a figure, target or run."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }}
figure {{ display: inline-block; margin: 0.5em; }}
img {{ max-width: 640px; }}
.note {{ color: #666; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""
