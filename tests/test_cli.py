"""The command line: exit codes, check/diff semantics, nothing written on failure.

What tfgen decides (build, check, diff, schema) runs through the CLI's main in this process
(`tfgen_here`); a failed build, the exit codes and the usage error run the real command; the
wheel is built by pip in the slow tier."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from conftest import ROOT, base_spec, run_tfgen, tfgen_here

from tfgen.spec.schema import schema


def _write(path, spec):
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_build_writes_spec_stem_py(tmp_path):
    spec = _write(tmp_path / "first.yaml", base_spec())
    result = tfgen_here("build", str(spec), "--out", str(tmp_path / "gen"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gen" / "first.py").exists()


def test_check_reports_missing_stale_and_hand_edited(tmp_path):
    a = _write(tmp_path / "a.yaml", base_spec(name="a"))
    b = _write(tmp_path / "b.yaml", base_spec(name="b"))
    c = _write(tmp_path / "c.yaml", base_spec(name="c"))
    out = tmp_path / "gen"
    assert tfgen_here("build", str(a), str(b), str(c), "--out", str(out), cwd=tmp_path).returncode == 0
    assert tfgen_here("check", str(a), str(b), str(c), "--out", str(out), cwd=tmp_path).returncode == 0

    (out / "a.py").unlink()
    _write(b, base_spec(name="b", seed=99))
    (out / "c.py").write_text((out / "c.py").read_text().replace("SEED = 1", "SEED = 2"))
    result = tfgen_here("check", str(a), str(b), str(c), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("gen/a.py: missing")
    assert lines[1].startswith("gen/b.py: stale")
    assert lines[2].startswith("gen/c.py: hand-edited")


def test_diff_shows_what_build_would_change(tmp_path):
    spec = _write(tmp_path / "s.yaml", base_spec())
    out = tmp_path / "gen"
    tfgen_here("build", str(spec), "--out", str(out), cwd=tmp_path)
    assert tfgen_here("diff", str(spec), "--out", str(out), cwd=tmp_path).stdout == ""
    _write(spec, base_spec(seed=7))
    result = tfgen_here("diff", str(spec), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 1
    assert "-SEED = 1\n+SEED = 7\n" in result.stdout
    assert result.stdout.startswith("--- a/gen/s.py\n+++ b/gen/s.py\n")


def test_failed_build_writes_nothing(tmp_path):
    good = _write(tmp_path / "good.yaml", base_spec())
    bad = _write(tmp_path / "bad.yaml", base_spec(train={"epochs": 0}))
    out = tmp_path / "gen"
    out.mkdir()
    (out / "good.py").write_text("# existing content\n")
    result = run_tfgen("build", str(good), str(bad), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.yaml:" in result.stderr and "train.epochs" in result.stderr
    assert "Traceback" not in result.stderr
    assert (out / "good.py").read_text() == "# existing content\n"
    assert sorted(p.name for p in out.iterdir()) == ["good.py"]


def test_validate_and_usage_exit_codes(tmp_path):
    spec = _write(tmp_path / "s.yaml", base_spec())
    ok = run_tfgen("validate", str(spec), cwd=tmp_path)
    assert ok.returncode == 0 and "valid" in ok.stdout
    assert run_tfgen("frobnicate", cwd=tmp_path).returncode == 2
    missing = run_tfgen("validate", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such spec file" in missing.stderr


def test_schema_is_json_schema_of_the_spec():
    result = tfgen_here("schema")
    assert result.returncode == 0
    printed = json.loads(result.stdout)
    assert printed == json.loads(json.dumps(schema()))
    assert {"name", "data", "targets", "train"} <= set(printed["required"])
    # the sections an algorithm requires: the default's, or a gan's
    assert printed["else"]["required"] == ["model", "losses", "optimizer"]
    assert printed["then"]["required"] == ["networks", "optimizers"]


@pytest.mark.slow  # pip builds a real wheel (an isolated build environment where hatchling is missing)
def test_installed_package_carries_the_templates(tmp_path):
    """A non-editable wheel must render too (the templates are package data of tfgen/generate)."""
    import importlib.util
    import subprocess
    import sys
    import zipfile

    shutil.copytree(ROOT, tmp_path / "src", ignore=shutil.ignore_patterns(".git", "runs", "*.egg-info", "__pycache__"))
    # Without hatchling here, pip builds in an isolated environment of its own (which fetches it).
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *isolation,
            "-w",
            str(tmp_path / "dist"),
            str(tmp_path / "src"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "dist").glob("tfgen-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tfgen/generate/templates/script.py.jinja" in names
    assert "tfgen/spec/keras_catalog.json" in names
