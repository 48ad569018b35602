"""`validate --deep` of the data sources: each source's deep check, by its registered unit
(`tfgen/sources/<type>/deep.py`, for the units that have one: csv, tfds, image_folder, text_folder)."""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from tfgen.errors import SpecIssue
from tfgen.sources import located_sources
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec


def unit_deep(kind: str) -> ModuleType | None:
    """The deep-check module of a registered source type, if it has one."""
    name = f"tfgen.sources.{kind}.deep"
    return import_module(name) if find_spec(name) is not None else None


def source_issues(doc: Located, spec: Spec) -> list[SpecIssue]:
    """The problems the sources' deep checks find (an empty list: none)."""
    issues: list[SpecIssue] = []
    for loc, source in located_sources(spec):
        module = unit_deep(source.type)
        if module is not None:
            issues += module.deep(doc, spec, loc, source)
    return issues
