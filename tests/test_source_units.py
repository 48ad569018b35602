"""Each data source is one unit, `tfgen/sources/<type>/`, registered on one line of
`tfgen/sources/registry.py`; the spec's union, the planner and the checks are derived from the registry."""

from __future__ import annotations

import ast
import typing
from importlib import import_module

import pytest
from conftest import ROOT

from tfgen.generate import sources_dir
from tfgen.generate.render import environment
from tfgen.generate.source_plan import unit_plan
from tfgen.sources import NAMES, SOURCES, Source
from tfgen.spec.models.data import TrainPipeline

UNITS = ROOT / "tfgen" / "sources"
# The files a unit may hold: the interface's parts (tfgen/sources/unit.py).
UNIT_FILES = {"__init__.py", "model.py", "plan.py", "rules.py", "deep.py", "source.py.jinja"}
SHARED = {"folders"}  # parts two units share: not a source of its own


def unit_folders() -> list[str]:
    return sorted(p.name for p in UNITS.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name not in SHARED)


def source_models_in(folder: str) -> list[str]:
    """The classes of a unit's model.py that have a `type` field: a source's model."""
    tree = ast.parse((UNITS / folder / "model.py").read_text())
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(isinstance(s, ast.AnnAssign) and getattr(s.target, "id", "") == "type" for s in node.body)
    ]


def test_every_source_folder_is_registered():
    """A new unit's folder that the registry does not name is caught here (and is no spec's source)."""
    assert unit_folders() == sorted(NAMES), "register tfgen/sources/<type>/ in tfgen/sources/registry.py:NAMES"


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_source_has_a_model_a_plan_a_template_and_docs(name):
    unit = SOURCES[name]
    assert isinstance(unit, Source)
    assert unit.name == name, "a unit's folder is named after its model's `type`"
    assert source_models_in(name) == [unit.model.__name__]
    plan = unit_plan(name)
    assert all(callable(getattr(plan, f, None)) for f in ("view", "read_call", "description"))
    assert environment().get_template(f"{name}/source.py.jinja") is not None
    assert (sources_dir() / name / "source.py.jinja").is_file()
    assert unit.docs.strip() and f"`{name}`" in unit.docs
    assert (unit.rules is not None) == (UNITS / name / "rules.py").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_a_unit_holds_only_the_interfaces_parts(name):
    files = {p.name for p in (UNITS / name).iterdir() if p.name != "__pycache__"}
    assert files <= UNIT_FILES, f"{name}: {sorted(files - UNIT_FILES)}"
    if (UNITS / name / "deep.py").is_file():
        assert callable(import_module(f"tfgen.sources.{name}.deep").deep)


def test_the_specs_source_union_is_the_registry():
    union = TrainPipeline.model_fields["source"].annotation
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated else ()
    members = members or typing.get_args(union)
    assert [model.__name__ for model in members] == [SOURCES[name].model.__name__ for name in NAMES]


def test_a_units_docstring_names_its_runtime_module():
    for name in NAMES:
        doc = import_module(f"tfgen.sources.{name}").__doc__
        modules = [word for word in doc.split() if "runtime/tfgen_runtime/" in word]
        assert modules, f"{name}: its docstring names its runtime module (runtime/tfgen_runtime/<module>.py)"
        for word in modules:
            path = word.strip("`(),.;")
            assert (ROOT / path).is_file(), f"{name}: {path}"
