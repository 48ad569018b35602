"""The one interface of a data source: what a unit of `tfgen/sources/<type>/` declares.

A unit is a folder named after the spec's `type:` value. Its modules serve three layers, so
each imports only what its layer may (tests/test_import_graph.py):

- `__init__.py`: `SOURCE`, a `Source` (below): the spec model, the reference text, the static
  rules and what the planner and checks need to know of the source as plain facts.
- `model.py`: the pydantic model of what the user writes (spec layer).
- `rules.py` (when it has static checks): `rules(spec, doc, loc, source)` (spec layer).
- `plan.py`: `view(source, part, spec)`, `read_call(view, weights)` and `description(source)`
  (generate layer; found by `tfgen.generate.source_plan`).
- `source.py.jinja`: what the script defines for the source beside `load_data` (often nothing),
  included by the data template under the name the planner chose.
- `deep.py` (when it has deep checks): `deep(doc, spec, loc, source)` (check layer; found by
  `tfgen.check.deep_sources`).

The runtime part of a source lives in `runtime/tfgen_runtime/` (a distribution of its own); each
unit's docstring names its runtime module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfgen.errors import SpecIssue

if TYPE_CHECKING:
    from tfgen.spec.loader import Loc, Located
    from tfgen.spec.models.base import StrictModel

# A static rule: the issues of one source at `loc` (`data.<part>.source`) of the spec.
Rule = Callable[[Any, "Located", "Loc", Any], Iterator[SpecIssue]]


@dataclass(frozen=True)
class Extra:
    """A package a source needs that tfgen does not install by default."""

    module: str  # what is imported: `tensorflow_datasets`
    what: str  # as a message names it: `TensorFlow Datasets`
    install: str  # the command that installs it: `pip install "tfgen[tfds]"`


@dataclass(frozen=True)
class Source:
    """One data source: its model and the facts the rest of tfgen asks of it (no `if type ==`)."""

    model: type[StrictModel]  # the spec model; its `type` literal is the source's name
    docs: str  # its paragraph of the spec reference (docs/spec-reference.md, `data`)
    rules: Rule | None = None  # its static checks (rules.py)
    in_memory: bool = False  # gives arrays: `data.train.in_memory: auto` may keep them on the device
    folder: bool = False  # a file list decoded as it streams (rt.listed, rt.split_files)
    drawn: bool = False  # random arrays, never read (`examples` of them)
    file_shards: bool = False  # `shard_policy: auto` shards it by files
    rows_held_out: bool = False  # may stream: `validation_split` is held out by rows (rt.held_out)
    example_weights: bool = False  # `data.train.sample_weight` names one of its arrays or columns
    weights_in_script: bool = False  # the script's own loader reads the weights (load_npz)
    file_field: str | None = None  # the field naming the file (or pattern) it reads, fingerprinted
    function_field: str | None = None  # the field naming a `package.module:function` the script imports
    arguments_field: str | None = None  # the field of free-form keyword arguments (checked finite)
    script_imports: tuple[str, ...] = ()  # modules its `source.py.jinja` needs in the script
    extra: Extra | None = None  # a package it needs: `smoke` and `--deep` refuse it missing, in one line

    @property
    def name(self) -> str:
        """The spec's `type:` value (the unit's folder)."""
        return self.model.model_fields["type"].annotation.__args__[0]
