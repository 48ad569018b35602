"""`tfgen build` checks what it writes: a generated file that does not compile or has an
undefined or unused name (pyflakes, as `ruff check --select F`) is a tfgen bug, reported in one
line naming the spec and the check, and nothing is written. (The specs that once generated a
crashing script are built and trained by tests/generate/test_spec_space.py.)"""

from __future__ import annotations

from dataclasses import replace

from conftest import ROOT, snapshot

from tfgen.cli import main
from tfgen.generate import plan
from tfgen.generate.selfcheck import problems


def break_the_heads(monkeypatch):
    """A planner bug: each head's last line reads a variable nothing assigns."""
    wire = plan.layer_lines

    def broken(*args, **kwargs):
        lines = wire(*args, **kwargs)
        if lines and lines[-1].target.startswith("outputs["):
            lines[-1] = replace(lines[-1], source="hidden")  # views are frozen
        return lines

    monkeypatch.setattr(plan, "layer_lines", broken)


def test_a_view_with_an_undefined_name_is_refused_in_one_line_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    out.mkdir()
    (out / "digits.py").write_text("# an existing file\n")
    before = snapshot(out)
    break_the_heads(monkeypatch)
    assert main(["build", "specs/digits.yaml", "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("tfgen: error: tfgen bug: the script generated from specs/digits.yaml (digits.py) fails")
    assert "undefined name 'hidden' (UndefinedName)" in err[0]
    assert "nothing was written" in err[0]
    assert snapshot(out) == before


def test_check_reports_a_generator_bug_instead_of_a_difference(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    break_the_heads(monkeypatch)
    assert main(["check", "specs/digits.yaml"]) == 2
    assert "tfgen bug" in capsys.readouterr().err


def test_problems_names_unused_and_undefined_names_and_syntax_errors():
    assert problems("import os\n", "x.py") == ["line 1: 'os' imported but unused (UnusedImport)"]
    assert problems("print(y)\n", "x.py") == ["line 1: undefined name 'y' (UndefinedName)"]
    assert problems("def f(:\n", "x.py")[0].endswith("(compile)")
    assert problems((ROOT / "generated" / "digits.py").read_text(), "digits.py") == []
