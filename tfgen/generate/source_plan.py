"""Planning a data source, dispatched by its type to its unit (`tfgen/sources/<type>/plan.py`):
its view, the call that reads it, the line that draws random arrays in its place (by part: a
synthetic source, or any under --synthetic), the script's docstring line, and which units'
`source.py.jinja` the script includes."""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from types import ModuleType
from typing import Any

from tfgen.generate.views import Keywords, Part, SourceView
from tfgen.sources import SOURCES, unit_of

DRAW_LINES = {
    Part.TRAIN: "train = rt.synthetic_arrays(SYNTHETIC_TRAIN_EXAMPLES, INPUTS, TARGETS, SEED)",
    Part.VALIDATION: "validation = rt.synthetic_arrays(SYNTHETIC_VALIDATION_EXAMPLES, INPUTS, TARGETS, SEED + 1)",
    Part.TEST: "test = rt.synthetic_arrays(SYNTHETIC_TEST_EXAMPLES, INPUTS, TARGETS, SEED + 2)",
}


def keyword_text(keywords: Keywords) -> str:
    """`name=value, ...`, or `**{...}`."""
    named = ", ".join(f"{name}={value}" for name, value in keywords.named.items())
    return named + (f"**{keywords.unpacked}" if keywords.unpacked else "")


def more_keywords(keywords: Keywords | None) -> str:
    """The keyword arguments after the positional ones (none: nothing)."""
    return f", {keyword_text(keywords)}" if keywords is not None else ""


def unit_plan(kind: str) -> ModuleType:
    """The planning module of a registered source type (`tfgen/sources/<type>/plan.py`)."""
    return import_module(f"tfgen.sources.{kind}.plan")


def source_view(source: Any, part: Part, spec: Any, npz_weights: str | None) -> SourceView:
    """The view of a source, with its read call and draw line (`npz_weights`: the literal key of
    the training examples' weights the script's own loader reads, or None)."""
    plan = unit_plan(source.type)
    view = plan.view(source, part, spec)
    weighted = npz_weights and part is Part.TRAIN and unit_of(source).weights_in_script
    weights = f", sample_weight={npz_weights}" if weighted else ""
    return replace(view, read_call=plan.read_call(view, weights), draw_line=DRAW_LINES[part])


def description(source: Any) -> str:
    """The script's docstring line of its training source."""
    return unit_plan(source.type).description(source)


def source_templates(kinds: set[str]) -> list[str]:
    """The units' `source.py.jinja` the script includes, in the registry's order."""
    return [f"{kind}/source.py.jinja" for kind in SOURCES if kind in kinds]
