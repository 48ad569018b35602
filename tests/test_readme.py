"""The README documents every spec field and states the set-up commands CI runs."""

from __future__ import annotations

from conftest import ROOT
from tfgen.spec import Spec
from tfgen.spec.data import NpzSource, PythonSource, SyntheticSource, TFRecordSource


def _fields(model, prefix=""):
    from pydantic import BaseModel
    import typing

    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        options = typing.get_args(field.annotation) or (field.annotation,)
        sections = [t for t in options if isinstance(t, type) and issubclass(t, BaseModel)
                    and t.__name__ not in ("KerasObject", "LossSpec", "LayerSpec")]
        if sections and name != "source" and typing.get_origin(field.annotation) is not dict:
            for section in sections:
                yield from _fields(section, path + ".")
        else:
            yield path  # a leaf, a mapping of entries, or a source (documented in its own table)


def test_readme_documents_every_spec_field():
    readme = (ROOT / "README.md").read_text()
    missing = [path for path in _fields(Spec) if f"`{path}`" not in readme]
    assert not missing, f"README lacks: {missing}"
    for source in (PythonSource, NpzSource, TFRecordSource, SyntheticSource):
        for name in source.model_fields:
            assert f"`{name}" in readme


def test_readme_commands_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[dev]" && tfgen build specs/digits.yaml && python generated/digits.py' in readme
    assert "python -m pytest" in readme and "-m pytest" in ci and '-e ".[dev]"' in ci
