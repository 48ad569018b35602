"""`validate --deep` of the data sources: each source's deep check, by its registered unit
(`tfgen/sources/<type>/deep.py`, for the units that have one: csv, tfds, image_folder, text_folder)."""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from tfgen.errors import SpecIssue
from tfgen.sources import located_sources, unit_of
from tfgen.spec.loader import Located, dotted
from tfgen.spec.models import Spec


def unit_deep(kind: str) -> ModuleType | None:
    """The deep-check module of a registered source type, if it has one."""
    name = f"tfgen.sources.{kind}.deep"
    return import_module(name) if find_spec(name) is not None else None


def installed(module: str) -> bool:
    """Whether a module can be imported (found without importing it)."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, a broken entry in sys.modules
        return False


def missing_extras(doc: Located, spec: Spec) -> list[SpecIssue]:
    """An issue at each source's `type` whose unit needs a package that is not installed."""
    issues = []
    for loc, source in located_sources(spec):
        extra = unit_of(source).extra
        if extra is not None and not installed(extra.module):
            message = f"a `{source.type}` source needs {extra.what}: {extra.install}"
            issues.append(doc.issue((*loc, "type"), message))
    return issues


def source_issues(doc: Located, spec: Spec) -> list[SpecIssue]:
    """The problems the sources' deep checks find (an empty list: none); a source whose package
    is missing is that one line."""
    issues = missing_extras(doc, spec)
    missing = {issue.field for issue in issues}
    for loc, source in located_sources(spec):
        module = unit_deep(source.type)
        if module is not None and dotted((*loc, "type")) not in missing:
            issues += module.deep(doc, spec, loc, source)
    return issues
