"""How the script reads a `csv` source: `rt.read_csv(path, ..., <options not at their defaults>)`."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.plan_data import holds_out_rows
from tfgen.generate.views import Part, SourceView
from tfgen.sources.csv.model import CsvSource

DEFAULTS = {"delimiter": ",", "na_values": (), "stream": None, "rows": False, "sample_weight": None}


def view(source: CsvSource, part: Part, spec) -> SourceView:
    """How `rt.read_csv` reads a csv source: its options that are not at their defaults."""
    options = {"delimiter": source.delimiter, "na_values": tuple(source.na_values)}
    if part is Part.TRAIN:  # `in_memory: false` streams the file, `true` reads it; auto: by its size
        options["stream"] = {True: False, False: True}.get(spec.data.train.in_memory)
        # A file that streams is split afterwards by rt.held_out, which needs its rows.
        options["rows"] = holds_out_rows(spec)
        options["sample_weight"] = spec.data.train.sample_weight  # the column of each example's weight
    return SourceView(
        "csv",
        part,
        path=literal(source.path),
        x=literal(source.x),
        y=literal(source.y),
        options=[f"{name}={literal(value)}" for name, value in options.items() if value != DEFAULTS[name]],
    )


def read_call(s: SourceView, weights: str) -> str:
    return f"rt.read_csv({s.path}, INPUTS, TARGETS, x={s.x}, y={s.y}" + "".join(f", {o}" for o in s.options) + ")"


def description(source: CsvSource) -> str:
    return "columns of a CSV file"
