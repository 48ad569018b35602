"""Each invalid spec gives exactly its pinned, located error output (and exit code 2)."""

from __future__ import annotations

import pytest
from conftest import ROOT, run_tfgen, tfgen_here

from tfgen.cli import main

CASES = sorted((ROOT / "tests" / "spec" / "invalid_specs").glob("*.yaml"))


@pytest.mark.parametrize("spec", CASES, ids=lambda p: p.stem)
def test_invalid_spec_output_is_pinned(spec, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    relative = spec.relative_to(ROOT).as_posix()
    expected = spec.with_suffix(".expected").read_text()
    for command in (["validate", relative], ["build", relative, "--out", str(tmp_path)]):
        assert main(command) == 2
        assert capsys.readouterr().err == expected
    assert not any(tmp_path.iterdir()), "a failed build wrote a file"


def test_invalid_spec_in_a_real_process_has_no_traceback():
    result = run_tfgen("build", CASES[0].relative_to(ROOT).as_posix())
    assert result.returncode == 2
    assert result.stderr == CASES[0].with_suffix(".expected").read_text()


def test_every_case_points_at_its_own_file():
    for spec in CASES:
        lines = spec.with_suffix(".expected").read_text().splitlines()
        assert lines and all(line.startswith(spec.relative_to(ROOT).as_posix() + ":") for line in lines)


def test_errors_of_several_specs_are_all_reported():
    result = tfgen_here("validate", *[c.relative_to(ROOT).as_posix() for c in CASES[:3]])
    assert result.returncode == 2
    assert result.stderr == "".join(c.with_suffix(".expected").read_text() for c in CASES[:3])
