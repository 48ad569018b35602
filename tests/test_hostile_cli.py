"""Issue 12, "the command line holds under hostile input": each attack is refused with exit 2,
one located line on stderr, no traceback, and no file created or changed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, base_spec, snapshot, tfgen_here

LAUGHS = (
    "".join(
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
        if prev
        else f"{name}: &{name} [x, x, x, x, x, x, x, x, x]\n"
        for prev, name in zip([None, *"abcdefgh"], "abcdefghi", strict=False)
    )
    + "name: small\n"
)


@pytest.fixture
def project(tmp_path):
    """A project folder (pyproject.toml marks its root) with a valid spec `small.yaml`."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(base_spec(), sort_keys=False))
    return tmp_path


def refused(project: Path, *args: str, where: str) -> str:
    """Run tfgen (in this process: an exception it does not turn into a line fails the test);
    assert exit 2, one line on stderr starting `where`, no traceback, nothing changed."""
    before = snapshot(project)
    result = tfgen_here(*args, cwd=project)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert re.match(where, lines[0]), lines[0]
    assert snapshot(project) == before, "a refused command changed a file"
    return lines[0]


def write(project: Path, name: str, text: str | bytes) -> str:
    path = project / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return name


# --- 1. aliases, size, depth -------------------------------------------------------------------


def test_billion_laughs_is_refused_at_once(project):
    write(project, "laughs.yaml", LAUGHS)
    # Expanded, the aliases would be 9**9 values: a run that expands them never ends (the
    # subprocess timeout fails the test); the refusal counts them as it reads instead.
    line = refused(project, "build", "laughs.yaml", where=r"laughs\.yaml:\d+:\d+: ")
    assert "aliases expand to more than" in line


def test_in_process_billion_laughs_is_refused_before_expanding():
    from tfgen.errors import SpecError
    from tfgen.spec.loader import load_text

    with pytest.raises(SpecError, match="aliases expand"):
        load_text(LAUGHS, "laughs.yaml")


def test_merge_key_bomb_is_refused(project):
    levels = ["a: &a {" + ", ".join(f"x{i}: 1" for i in range(9)) + "}"]
    for prev, name in zip("abcdef", "bcdefg", strict=False):
        levels.append(f"{name}: &{name} {{<<: [{', '.join([f'*{prev}'] * 9)}]}}")
    write(project, "merge.yaml", "\n".join(levels) + "\n")
    assert "merge keys expand" in refused(project, "validate", "merge.yaml", where=r"merge\.yaml:\d+:\d+: ")


def test_oversized_spec_is_refused(project):
    write(project, "big.yaml", "x: [" + "1," * 600_000 + "1]\n")
    assert "larger than" in refused(project, "build", "big.yaml", where=r"big\.yaml:1:1: ")


def test_too_many_values_are_refused(project):
    write(project, "many.yaml", "name: [" + "1," * 100_000 + "1]\n")
    assert "more than" in refused(project, "validate", "many.yaml", where=r"many\.yaml:1:\d+: ")


def test_extends_dev_zero_reads_a_bounded_prefix(project):
    write(project, "zero.yaml", "extends: /dev/zero\nname: small\n")
    assert "larger than" in refused(project, "build", "zero.yaml", where=r"/dev/zero:1:1: ")


# --- 2. no RecursionError ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["name: " + "[" * 600 + "]" * 600 + "\n", "".join("  " * i + "k:\n" for i in range(600))],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused(project, text):
    write(project, "deep.yaml", text)
    assert "nests deeper than" in refused(project, "build", "deep.yaml", where=r"deep\.yaml:\d+:\d+: ")


def test_long_extends_chain_is_refused(project):
    for i in range(2000):
        write(project, f"c{i}.yaml", f"extends: c{i + 1}.yaml\n" if i < 1999 else "name: small\n")
    line = refused(project, "validate", "c0.yaml", where=r"c\d+\.yaml:1:10: extends: ")
    assert "chain is longer than" in line


def test_recursive_alias_is_refused(project):
    write(project, "loop.yaml", "name: &a [*a]\n")
    assert "refers to a node that contains it" in refused(project, "validate", "loop.yaml", where=r"loop\.yaml:1:")


# --- 3. control bytes, !!binary, timestamps ----------------------------------------------------


@pytest.mark.parametrize(
    "raw, where",
    [(b"name: sm\x00all\n", r"bad\.yaml:1:9: "), (b"name: small\nseed: \x07\n", r"bad\.yaml:2:7: ")],
    ids=["nul", "bell"],
)
def test_control_bytes_are_located(project, raw, where):
    write(project, "bad.yaml", raw)
    assert "control character" in refused(project, "build", "bad.yaml", where=where)


def test_non_utf8_spec_is_located(project):
    write(project, "bad.yaml", b"name: small\nseed: \xff\n")
    assert "not UTF-8" in refused(project, "build", "bad.yaml", where=r"bad\.yaml:2:7: ")


def test_binary_value_is_refused(project):
    spec = yaml.safe_dump(base_spec(), sort_keys=False).replace("units: 16", "units: !!binary aGVsbG8=")
    write(project, "bin.yaml", spec)
    assert "!!binary" in refused(project, "build", "bin.yaml", where=r"bin\.yaml:\d+:\d+: model\.layers\.0\.units: ")


def test_timestamp_in_a_layer_argument_is_refused(project):
    spec = yaml.safe_dump(base_spec(), sort_keys=False).replace("units: 16", "units: 2001-01-01")
    write(project, "date.yaml", spec)
    assert "timestamp" in refused(project, "build", "date.yaml", where=r"date\.yaml:\d+:\d+: model\.layers\.0\.units: ")


def test_timestamp_through_set_is_refused(project):
    line = refused(
        project,
        "build",
        "small.yaml",
        "--set",
        "model.layers.0.units=2001-01-01",
        where=r"--set model\.layers\.0\.units=2001-01-01:1:22: model\.layers\.0\.units: ",
    )
    assert "timestamp" in line


# --- 4. unusable output folders ----------------------------------------------------------------


def test_out_is_a_file(project):
    write(project, "afile", "keep me\n")
    assert "no file was changed" in refused(
        project, "build", "small.yaml", "--out", "afile", where=r"tfgen: error: afile: "
    )


def test_out_under_a_file(project):
    write(project, "afile", "keep me\n")
    refused(project, "build", "small.yaml", "--out", "afile/sub", where=r"tfgen: error: afile/sub: ")


def test_out_in_proc(project):
    refused(project, "build", "small.yaml", "--out", "/proc/1", where=r"tfgen: error: /proc/1")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_read_only(project):
    (project / "ro").mkdir()
    (project / "ro").chmod(0o555)
    try:
        refused(project, "build", "small.yaml", "--out", "ro", where=r"tfgen: error: ro/")
    finally:
        (project / "ro").chmod(0o755)


def test_init_dir_is_a_file(project):
    write(project, "afile", "keep me\n")
    refused(project, "init", "--dir", "afile", where=r"tfgen: error: afile: ")


# --- 5. all or nothing -------------------------------------------------------------------------


def test_failed_write_of_a_later_spec_changes_nothing(project):
    write(project, "other.yaml", yaml.safe_dump(base_spec(name="other"), sort_keys=False))
    assert tfgen_here("build", "small.yaml", "--out", "gen", cwd=project).returncode == 0
    (project / "small.yaml").write_text(yaml.safe_dump(base_spec(seed=7), sort_keys=False))  # small.py now stale
    (project / "gen" / "other.py").mkdir()  # the second target cannot be written
    refused(project, "build", "small.yaml", "other.yaml", "--out", "gen", where=r"tfgen: error: gen/other\.py: ")


def test_a_failed_rename_rolls_back_the_renamed_files(tmp_path, monkeypatch):
    from tfgen.generate import build

    first, second, third = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    first.write_text("old a\n")
    replace = os.replace
    calls = []

    def failing(source, destination):
        calls.append(destination)
        if Path(destination) == third:
            raise PermissionError(13, "Permission denied")
        replace(source, destination)

    monkeypatch.setattr(build.os, "replace", failing)
    with pytest.raises(build.OutputError, match=r"c\.py"):
        build.write_files([(first, "new a\n"), (second, "new b\n"), (third, "new c\n")])
    monkeypatch.setattr(build.os, "replace", replace)
    assert first.read_text() == "old a\n" and not second.exists() and not third.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]  # no temporary file left


# --- 6. outputs that collide -------------------------------------------------------------------


def test_two_specs_with_the_same_stem_are_refused(project):
    (project / "x").mkdir()
    (project / "y").mkdir()
    write(project, "x/small.yaml", yaml.safe_dump(base_spec(), sort_keys=False))
    write(project, "y/small.yaml", yaml.safe_dump(base_spec(), sort_keys=False))
    line = refused(project, "build", "x/small.yaml", "y/small.yaml", "--out", "gen", where=r"y/small\.yaml:1:1: ")
    assert "x/small.yaml also writes gen/small.py" in line


def test_a_spec_that_would_overwrite_itself_is_refused(project):
    write(project, "train.py", yaml.safe_dump(base_spec(), sort_keys=False))
    assert "overwrite a spec" in refused(project, "build", "train.py", "--out", ".", where=r"train\.py:1:1: ")


# --- 7. unreadable targets ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "diff"])
@pytest.mark.parametrize("kind", ["binary", "directory"])
def test_unreadable_target_exits_2(project, command, kind):
    assert tfgen_here("build", "small.yaml", "--out", "gen", cwd=project).returncode == 0
    target = project / "gen" / "small.py"
    target.unlink()
    if kind == "binary":
        target.write_bytes(b"\xff\xfe\x00")
    else:
        target.mkdir()
    line = refused(project, command, "small.yaml", "--out", "gen", where=r"tfgen: error: gen/small\.py: cannot read")
    assert ("not UTF-8" in line) if kind == "binary" else ("directory" in line)


# --- 8. modes and leftovers --------------------------------------------------------------------


def test_generated_files_honour_the_umask_and_leftovers_go(project):
    (project / "gen").mkdir()
    leftover = project / "gen" / ".small.py.k3j_x9ab.tmp"
    leftover.write_text("from a killed build")
    foreign = project / "gen" / ".notes.tmp"
    foreign.write_text("not ours")
    result = tfgen_here("build", "small.yaml", "--out", "gen", "--vendor", cwd=project)
    assert result.returncode == 0, result.stderr
    for name in ("small.py", "tfgen_runtime/__init__.py", "tfgen_runtime/cli.py"):
        assert (project / "gen" / name).stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert not leftover.exists() and foreign.exists()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- 9. blame ----------------------------------------------------------------------------------


def test_set_of_an_unknown_path_blames_the_argument(project):
    line = refused(
        project, "validate", "small.yaml", "--set", "bogus.path=1", where=r"--set bogus\.path=1:1:1: bogus: unknown key"
    )
    assert "small.yaml" not in line


def test_extends_outside_the_project_is_shown_as_given(project):
    write(project, "etc.yaml", "extends: /etc/passwd\n")
    refused(project, "validate", "etc.yaml", where=r"/etc/passwd:1:1: ")


# --- 10. YAML 1.1 surprises in typed fields ----------------------------------------------------


@pytest.mark.parametrize("raw, shown", [("1:30", "'1:30'"), ("0o17", "'0o17'"), ("true", "True"), ('"16"', "'16'")])
def test_typed_fields_take_no_surprises(project, raw, shown):
    spec = yaml.safe_dump(base_spec(), sort_keys=False).replace("batch_size: 32", f"batch_size: {raw}")
    write(project, "typed.yaml", spec)
    line = refused(project, "validate", "typed.yaml", where=r"typed\.yaml:\d+:\d+: data\.train\.batch_size: ")
    assert line.endswith(f"found {shown}")


def test_typed_fields_through_set(project):
    refused(
        project,
        "validate",
        "small.yaml",
        "--set",
        "train.epochs=true",
        where=r"--set train\.epochs=true:1:14: train\.epochs: input should be a valid integer",
    )


# --- 11. names ---------------------------------------------------------------------------------


def test_non_ascii_name_is_refused_with_the_reason(project):
    spec = base_spec(targets={"π": {"shape": [], "dtype": "int32", "classes": 3}})
    write(project, "pi.yaml", yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    line = refused(project, "validate", "pi.yaml", where=r"pi\.yaml:\d+:\d+: targets\.π: ")
    assert "must be ASCII" in line
    reference = " ".join((ROOT / "docs" / "spec-reference.md").read_text().split())
    assert "must be ASCII Python identifiers" in reference
