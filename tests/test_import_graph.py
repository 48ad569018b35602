"""tfgen's packages import one way: cli -> tools (check, cluster, lint) -> generate -> spec -> leaves
(a data source's unit, tfgen/sources/<type>/, spreads over generate, check and spec: SOURCE_LAYERS)."""

from __future__ import annotations

import ast

from conftest import ROOT

LEAVES = {"errors", "paths", "processes", "datasets", "stdout", "__version__"}
# package -> the packages it may import (besides itself and the leaves)
ALLOWED = {
    "cli": {"check", "cluster", "generate", "lint", "predict", "report", "spec", "sweep"},
    "__main__": {"cli"},
    "check": {"generate", "spec"},
    "cluster": {"spec", "sweep"},  # a spec is loaded by spec/load.py, never by the generator
    "predict": set(),  # tfgen predict/evaluate: a run's script run on new data (leaves only)
    "report": {"spec"},  # tfgen report: run folders drawn by the runtime, their specs read by spec/
    "generate": {"spec"},
    "sweep": {"generate", "report", "spec"},  # a trial is a spec built by the generator; the top trials reported
    "spec": {"lint"},  # a custom step's module is linted when the spec is validated (lint reads code only)
    "lint": set(),
    **{leaf: set() for leaf in LEAVES},
}


def tfgen_modules():
    """tfgen's own modules (the runtime, runtime/tfgen_runtime, is a package of its own)."""
    return sorted((ROOT / "tfgen").rglob("*.py"))


# A data source's unit (tfgen/sources/<type>/) serves three layers, so each of its modules belongs
# to the layer it serves: plan.py to generate, deep.py to check, the rest (the registry, the
# models, the rules, the docs) to spec, whose union of source models is built from the registry.
SOURCE_LAYERS = {"plan": "generate", "deep": "check"}


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["sources"]:
        return SOURCE_LAYERS.get(parts[-1], "spec")
    return parts[1] if len(parts) > 1 else "tfgen"


def imports():
    for path in tfgen_modules():
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tfgen":
                targets = [f"{node.module}.{a.name}" for a in node.names] if node.module == "tfgen" else [node.module]
                for target in targets:
                    yield path, package_of(module), package_of(target)


def test_no_relative_imports_hide_the_graph():
    relative = [
        str(path.relative_to(ROOT))
        for path in tfgen_modules()
        if any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(ast.parse(path.read_text())))
    ]
    assert not relative


def test_imports_go_one_way():
    wrong = {
        (str(p.relative_to(ROOT)), source, target)
        for p, source, target in imports()
        if target != source and target not in LEAVES and target not in ALLOWED.get(source, set())
    }
    assert not wrong
