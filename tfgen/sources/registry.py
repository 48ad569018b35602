"""The registry of data sources: one line a source (its unit's folder, `tfgen/sources/<type>/`).

The spec's union of source models (`tfgen.spec.models.data.Source`) is built from it while
`tfgen.spec.models` is imported, so it lives in a module of its own (tfgen/sources/__init__.py
imports the spec's models first, then this).
"""

from __future__ import annotations

from importlib import import_module

from tfgen.sources.unit import Source

# The registered sources, one line each, in the order of the spec's union (the JSON Schema's).
NAMES = (
    "python",
    "npz",
    "tfrecord",
    "keras",
    "synthetic",
    "tfds",
    "csv",
    "image_folder",
    "text_folder",
)

SOURCES: dict[str, Source] = {name: import_module(f"tfgen.sources.{name}").SOURCE for name in NAMES}
