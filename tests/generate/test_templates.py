"""The templates lay the planned view out and decide nothing: enums are tested by member, a
misspelt member or field fails the render, every template is used, and the seams that template
side decisions left in the output stay closed."""

from __future__ import annotations

import re
from enum import Enum

import jinja2
import jinja2.meta
import pytest
import yaml
from conftest import ROOT, SPECS, base_spec

from tfgen.generate import views
from tfgen.generate.decisions import Jit
from tfgen.generate.render import environment, render, templates_dir
from tfgen.paths import display_path
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate

TEMPLATES = sorted(templates_dir().rglob("*.jinja"))  # algorithms/ holds each algorithm's
EXAMPLE_SPECS = SPECS + sorted((ROOT / "tests" / "generate" / "regression_specs").glob("*.yaml"))
# What tfgen renders by name: render.py the script, init.py the starter spec.
ROOT_TEMPLATES = {
    "script.py.jinja",
    "starter.yaml.jinja",
    "algorithms/gan.py.jinja",
    "algorithms/custom.py.jinja",
    "algorithms/contrastive.py.jinja",
}  # gan, custom, contrastive: scripts of their own
JINJA_TAG = re.compile(r"{%-?(.*?)-?%}|{{-?(.*?)-?}}", re.DOTALL)
# Ways a template could decide on a view field's text, where a typo renders False silently.
STRING_DECISIONS = {
    "an enum's value compared": re.compile(r"\.value\s*(?:==|!=)|(?:==|!=)\s*[\w.]+\.value\b"),
    "a string compared": re.compile(r"(?:==|!=)\s*[\"']|[\"']\s*(?:==|!=)"),
    "a string looked up in a collection": re.compile(r"[\"'][\w.]*[\"']\s+(?:not\s+)?in\s"),
    "code chosen into a variable": re.compile(r"^\s*set\s+\w+\s*=\s*[\"']"),
}


def _spec(path):
    return validate(resolve(path, display_path(path), []))


def _render_dict(tmp_path, spec: dict) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return render(_spec(path), spec_path="small.yaml", sha256="0" * 64, spec_dir=".")


def _function(text: str, name: str) -> str:
    """The source of top-level function or method `name` in a generated script."""
    match = re.search(rf"^( *)def {name}\(.*?(?=^\1?\S|\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"no def {name}"
    return match.group(0)


# Slow: 27 renders (black is most of each). The fast tier renders every one of these specs through
# the same strict environment already: test_golden plans specs/*.yaml and test_spec_space builds
# every regression spec, and an undefined name fails either.
@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_example_spec_renders_through_strict_templates(path):
    text = render(_spec(path), spec_path=path.name, sha256="0" * 64, spec_dir=".")
    compile(text, path.name, "exec")


@pytest.mark.parametrize(
    "source",
    [
        "{% if v.step.jit is sameas Jit.GPUU %}{% endif %}",  # a misspelt member
        "{% if v.step.jitt is sameas Jit.GPU %}{% endif %}",  # a misspelt view field
        "{% if Modul.NUMPY in v.data.imports %}{% endif %}",  # a misspelt enum
    ],
)
def test_a_misspelt_member_or_field_fails_the_render(source):
    view = type("V", (), {"step": type("S", (), {"jit": Jit.GPU}), "data": type("D", (), {"imports": frozenset()})})
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string(source).render(v=view)


def test_a_spelt_member_is_tested_by_identity():
    template = environment().from_string("{{ 'yes' if jit is sameas Jit.GPU else 'no' }}")
    assert [template.render(jit=jit) for jit in (Jit.GPU, Jit.ON)] == ["yes", "no"]


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_templates_never_decide_on_strings(path):
    found = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        for match in JINJA_TAG.finditer(line):
            inside = match.group(1) or match.group(2) or ""
            found += [
                f"{path.name}:{number}: {what}: {line.strip()}"
                for what, pattern in STRING_DECISIONS.items()
                if pattern.search(inside)
            ]
    assert not found, "\n".join(found)


def test_every_template_is_rendered_from_a_root():
    env = environment()
    reached, todo = set(), list(ROOT_TEMPLATES)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            source = (templates_dir() / name).read_text()
            todo += [t for t in jinja2.meta.find_referenced_templates(env.parse(source)) if t]
    assert {path.relative_to(templates_dir()).as_posix() for path in TEMPLATES} == reached


def test_a_memory_cache_names_no_file(tmp_path):
    cifar = (ROOT / "generated" / "cifar.py").read_text()
    assert "ds.cache(" not in cifar
    assert "ds = rt.cached(ds, train)" in _function(cifar, "train_pipeline")
    assert "ds = rt.cached(ds, validation)" in _function(cifar, "validation_pipeline")
    spec = base_spec()
    spec["data"]["train"] |= {"cache": "cache/train", "in_memory": False}
    spec["data"]["validation"] |= {"cache": True}
    text = _render_dict(tmp_path, spec)
    # A cache file is checked against what made it: the spec's state and the source's files.
    assert 'rt.cached(ds, train, "cache/train", STATE_SHA256, [])' in _function(text, "train_pipeline")
    assert "rt.cached(ds, validation)" in _function(text, "validation_pipeline")


def test_a_synthetic_source_is_drawn_once(tmp_path):
    load_data = _function((ROOT / "generated" / "multitask.py").read_text(), "load_data")
    assert load_data.count("rt.synthetic_arrays(") == 2 and "if synthetic" not in load_data
    spec = base_spec()  # synthetic training data, real validation data
    spec["data"]["validation"] = {"source": {"type": "npz", "path": "v.npz", "x": "x", "y": "y"}}
    load_data = _function(_render_dict(tmp_path, spec), "load_data")
    assert load_data.count("SYNTHETIC_TRAIN_EXAMPLES") == 1
    assert load_data.count("SYNTHETIC_VALIDATION_EXAMPLES") == 1 and "load_npz(" in load_data


def test_only_a_weighting_that_moves_is_updated_in_the_step(tmp_path):
    multitask = (ROOT / "generated" / "multitask.py").read_text()  # uncertainty: trained with the model
    assert "weighting.update(" not in multitask and "def update(self" not in multitask
    spec = yaml.safe_load((ROOT / "specs" / "multitask.yaml").read_text())
    spec["loss_weighting"] = {"type": "ema_ratio"}
    text = _render_dict(tmp_path, spec)
    assert "self.weighting.update(task_losses)" in _function(text, "train_step")
    assert "def update(self, task_losses):" in text


def test_keyword_arguments_are_named_or_unpacked(tmp_path):
    spec = base_spec()
    spec["data"]["train"]["source"] = {"type": "python", "function": "m:load", "kwargs": {"not-a-name": 1}}
    spec["data"]["validation"] = {"source": {"type": "python", "function": "m:load", "kwargs": {"a": 1, "b": "x"}}}
    load_data = "".join(_function(_render_dict(tmp_path, spec), "load_data").split())  # as black wraps it
    assert 'train=rt.from_function("m:load",INPUTS,TARGETS,SPEC_DIR,**{"not-a-name":1})' in load_data
    assert 'validation=rt.from_function("m:load",INPUTS,TARGETS,SPEC_DIR,a=1,b="x")' in load_data


def test_every_enum_of_the_view_is_a_template_global():
    enums = {value for value in vars(views).values() if isinstance(value, type) and issubclass(value, Enum)}
    assert enums - {Enum} == set(views.TEMPLATE_ENUMS)
