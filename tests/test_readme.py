"""The README states the set-up commands CI runs (the spec fields are in docs/spec-reference.md)."""

from __future__ import annotations

from conftest import ROOT


def test_readme_commands_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    install = 'pip install -e ./runtime -e ".[dev]"'
    assert f"{install} && tfgen build specs/digits.yaml && python generated/digits.py" in readme
    assert "python -m pytest" in readme and "-m pytest" in ci and '-e ".[dev]"' in ci
    assert "install --quiet ./runtime " in ci  # the runtime, as users get it
