"""The templates decide nothing: every `{% if %}`, `{% elif %}` and inline `x if y` tests one
field the planner named for what the template does with it (tfgen/generate/plan*.py), never a
combination of them; and everything they read comes from one view, `v`."""

from __future__ import annotations

import black
import jinja2.meta
import pytest
from conftest import ROOT
from jinja2 import nodes

from tfgen import __version__
from tfgen.generate import sources_dir
from tfgen.generate.plan import make_view
from tfgen.generate.render import BLACK_MODE, environment, render, templates_dir
from tfgen.generate.views import TEMPLATE_ENUMS
from tfgen.paths import display_path
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate

# The script's templates (algorithms' included) and each data source's part (tfgen/sources/<type>/source.py.jinja).
TEMPLATES = sorted(templates_dir().rglob("*.jinja")) + sorted(sources_dir().glob("*/*.jinja"))
# An algorithm's template reads its own view root beside `v` (tfgen/generate/algorithms).
ALGORITHM_ROOTS = {
    "gan.py.jinja": {"g", "nets"},
    "custom.py.jinja": {"c", "nets"},
    "contrastive.py.jinja": {"k", "nets"},
    "_networks.py.jinja": {"nets"},
    "_metrics.py.jinja": {"nets"},
    "_epochs.py.jinja": {"nets"},
}
ENUM_NAMES = {kind.__name__ for kind in TEMPLATE_ENUMS}


def dotted(node: nodes.Node) -> bool:
    """`name` or `name.field.field`: one value of the view, read as it is."""
    while isinstance(node, nodes.Getattr):
        node = node.node
    return isinstance(node, nodes.Name)


def enum_member(node: nodes.Node) -> bool:
    """`Kind.MEMBER` of an enum the planner chose from (a Jinja global: tfgen.generate.views)."""
    return isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name in ENUM_NAMES


def one_named_field(test: nodes.Node) -> bool:
    """A field, or a field that holds an enum tested against one member (`x is sameas Jit.GPU`):
    no `and`/`or`/`not`, comparison, membership, filter or call."""
    if isinstance(test, nodes.Test):
        return test.name == "sameas" and dotted(test.node) and len(test.args) == 1 and enum_member(test.args[0])
    return dotted(test)


def conditions(source: str) -> list[tuple[int, nodes.Node]]:
    """(line, condition) of every `{% if %}`, `{% elif %}`, `{{ a if b else c }}` and
    `{% for x in xs if c %}` of a template."""
    found = environment().parse(source).find_all((nodes.If, nodes.CondExpr, nodes.For))
    return [(branch.lineno, branch.test) for branch in found if branch.test is not None]


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: path.relative_to(path.parents[1]).as_posix())
def test_template_conditions_test_one_named_field(path):
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    decided = [
        f"{path.name}:{line}: {lines[line - 1].strip()}"
        for line, test in conditions(source)
        if not one_named_field(test)
    ]
    assert not decided, "conditions the planner should name as one field:\n" + "\n".join(decided)


@pytest.mark.parametrize(
    "condition",
    [
        "a and b",
        "a or b.c",
        "not a",
        "a == 1",
        "a is not none",
        "Kind.X in a.kinds",
        "a | length",
        "a.b()",
        "a[0]",
        "a is sameas b",
        "a is defined",
    ],
)
def test_a_compound_or_computed_condition_is_refused(condition):
    """What the template check refuses (a one-field condition passes: `a.b`, `a is sameas Jit.GPU`)."""
    for template in ("{{% if {} %}}x{{% endif %}}", "{{{{ 'x' if {} }}}}", "{{% for x in xs if {} %}}x{{% endfor %}}"):
        [(_, test)] = conditions(template.format(condition))
        assert not one_named_field(test)
    for allowed in ("a.b", "loop.last", "a.kind is sameas Jit.GPU"):
        branches = conditions(f"{{% if {allowed} %}}x{{% elif {allowed} %}}y{{% endif %}}")
        assert len(branches) == 2 and all(one_named_field(test) for _, test in branches)


def macros() -> set[str]:
    """The macros the templates define (one template's may be called from one it includes)."""
    return {macro.name for path in TEMPLATES for macro in environment().parse(path.read_text()).find_all(nodes.Macro)}


@pytest.mark.parametrize(
    "path",
    [path for path in TEMPLATES if path.name != "starter.yaml.jinja"],
    ids=lambda p: p.relative_to(p.parents[1]).as_posix(),
)
def test_script_templates_read_one_view_root(path):
    """Everything a script template reads comes from `v` (tfgen.generate.views.View), besides
    the enums and the macros of the templates that include it."""
    read = jinja2.meta.find_undeclared_variables(environment().parse(path.read_text(encoding="utf-8")))
    assert read - macros() <= {"v", *ALGORITHM_ROOTS.get(path.name, ())}


def test_the_script_renders_from_the_view_alone():
    """The script is the view laid out: `v` alone renders every byte `tfgen build` writes."""
    path = ROOT / "specs" / "multitask.yaml"
    spec = validate(resolve(path, display_path(path), []))
    view = make_view(spec, spec_path="specs/multitask.yaml", spec_sha256="0" * 64, version=__version__, spec_dir=".")
    alone = black.format_str(environment().get_template("script.py.jinja").render(v=view), mode=BLACK_MODE)
    assert alone == render(spec, spec_path="specs/multitask.yaml", sha256="0" * 64, spec_dir=".")
