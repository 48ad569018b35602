"""The shape of the generated code, measured: sizes, function lengths, nesting, names.

The support module is measured by what a reader feels (function length, nesting), not by its
line count: a ceiling on the count made it shorter and harder to read.
"""

from __future__ import annotations

import ast

import black
import pytest

from conftest import ROOT, SPECS
from tfgen.generate.plan import SCRIPT_NAMES
from tfgen.generate.render import BLACK_MODE, RUNTIME_FILE

GENERATED = ROOT / "generated"
SCRIPTS = [GENERATED / f"{spec.stem}.py" for spec in SPECS]
DIGITS_CEILING = 250
RUNTIME_FUNCTION_CEILING = 40  # lines of one function of the support module


def functions(tree: ast.AST):
    """Every function and method, with its qualified name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item
        elif isinstance(node, ast.Module):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield item.name, item


def nesting(node: ast.AST) -> int:
    """Depth of compound statements, the function itself counting as 1."""
    blocks = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)
    inner = [nesting(child) for child in ast.iter_child_nodes(node)]
    return (1 if isinstance(node, blocks) else 0) + max(inner, default=0)


def lines(path) -> int:
    return len(path.read_text().splitlines())


def test_every_script_is_at_most_350_lines():
    sizes = {path.name: lines(path) for path in SCRIPTS}
    assert all(size <= 350 for size in sizes.values()), sizes


def test_digits_stays_under_its_ceiling():
    assert lines(GENERATED / "digits.py") <= DIGITS_CEILING


def test_support_module_functions_are_at_most_40_lines():
    tree = ast.parse((GENERATED / RUNTIME_FILE).read_text())
    long = {name: f.end_lineno - f.lineno + 1 for name, f in functions(tree)}
    assert not {name: n for name, n in long.items() if n > RUNTIME_FUNCTION_CEILING}


def test_the_support_module_template_is_what_black_writes():
    """The template is black's output already: a reviewer reads in the templates what is generated."""
    body = (ROOT / "tfgen" / "generate" / "templates" / RUNTIME_FILE).read_text(encoding="utf-8")
    assert black.format_str(body, mode=BLACK_MODE) == body


@pytest.mark.parametrize("path", SCRIPTS + [GENERATED / RUNTIME_FILE], ids=lambda p: p.stem)
def test_functions_are_short_and_shallow(path):
    tree = ast.parse(path.read_text())
    long = {name: f.end_lineno - f.lineno + 1 for name, f in functions(tree) if f.end_lineno - f.lineno >= 60}
    deep = {name: nesting(f) for name, f in functions(tree) if nesting(f) > 4}
    assert not long, f"functions over 60 lines: {long}"
    assert not deep, f"nesting over 4: {deep}"
    main = dict(functions(tree)).get("main")
    if main is not None:
        assert main.end_lineno - main.lineno + 1 <= 40


def test_no_closures_inside_main():
    for path in SCRIPTS:
        main = dict(functions(ast.parse(path.read_text())))["main"]
        assert not [n for n in ast.walk(main) if isinstance(n, ast.FunctionDef) and n is not main]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_every_top_level_name_comes_from_the_registry(path):
    """Top-level names come from one place (tfgen.generate.plan.SCRIPT_NAMES), so nothing can shadow them."""
    bound = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    assert bound <= SCRIPT_NAMES, sorted(bound - SCRIPT_NAMES)


def test_scripts_have_the_guide_order():
    """Constants, data, model, optimizer/losses/metrics, the steps, the epoch loop, main."""
    order = ["load_data", "build_model", "build_optimizer", "build_metrics", "Trainer", "fit", "main"]
    for path in SCRIPTS:
        names = [n.name for n in ast.parse(path.read_text()).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assert [n for n in names if n in order] == order, path.name
