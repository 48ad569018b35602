"""The data sources, one unit a source type (`tfgen/sources/<type>/`), and their one registry.

`SOURCES` (registry.py: `NAMES`, one line a source) is where a source is registered: the spec's union of source models
(`tfgen.spec.models.data.Source`), the static rules (`tfgen.spec.crosscheck`), the planner's
views and read calls (`tfgen.generate.source_plan`) and `validate --deep`'s checks
(`tfgen.check.deep`) are all derived from it; nothing else dispatches on a source's type.
`unit.py` is the interface a unit fills in; `mapping.py` and `folders/` are parts units share.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import tfgen.spec.models  # noqa: F401  (first: its union of source models imports the registry)
from tfgen.sources.registry import NAMES, SOURCES
from tfgen.sources.unit import Source

__all__ = ["NAMES", "PARTS", "SOURCES", "Source", "located_sources", "unit_of"]

PARTS = ("train", "validation", "test")


def located_sources(spec: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(location `data.<part>.source`, source) of the spec's sources: training, validation, test."""
    for part in PARTS:
        pipeline = getattr(spec.data, part)
        if pipeline is not None:
            yield ("data", part, "source"), pipeline.source


def unit_of(source: Any) -> Source:
    """The registered unit of a spec's source (its `type`)."""
    return SOURCES[source.type]
