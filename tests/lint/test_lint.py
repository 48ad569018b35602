"""`tfgen lint`: every rule both ways, the corpus, tfgen's own output, the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, import_blocker, run_tfgen

from tfgen.cli import main
from tfgen.lint import RULES, lint_paths, lint_source
from tfgen.lint.report import readme_table, rule_table

CORPUS = ROOT / "tests" / "lint" / "corpus"
HEAD = "import tensorflow as tf\nfrom tensorflow import keras\n"


def _codes(source):
    return [(f.line, f.column, f.code) for f in lint_source(HEAD + textwrap.dedent(source).lstrip("\n"), "snippet.py")]


FIXTURES = ROOT / "tests" / "lint" / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9,\s]+)$")
SECTION = "# %% separate file"


def _fixture_sections(lines: list[str]) -> list[list[int]]:
    """Line indexes of each independently linted part of a fixture (split at `# %% separate file`)."""
    sections = [[]]
    for index, line in enumerate(lines):
        if line.startswith(SECTION):
            sections.append([])
        sections[-1].append(index)
    return sections


def _fixture_expected(lines: list[str]) -> set[tuple[int, str]]:
    expected = set()
    for number, line in enumerate(lines, start=1):
        match = EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group(1).split(",") if code.strip())
    return expected


def _fixture_found(path) -> set[tuple[int, str]]:
    lines = path.read_text().splitlines()
    found = set()
    for section in _fixture_sections(lines):
        keep = set(section)
        text = "\n".join(line if index in keep else "" for index, line in enumerate(lines)) + "\n"
        found.update((f.line, f.code) for f in lint_source(text, str(path)))
    return found


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("TFG*.py")), ids=lambda p: p.stem)
def test_fixture_gives_exactly_the_findings_marked_inline(path):
    lines = path.read_text().splitlines()
    assert sorted(_fixture_found(path)) == sorted(_fixture_expected(lines))


def test_every_rule_has_a_fixture_with_its_bad_and_its_fixed_form():
    assert {p.stem for p in FIXTURES.glob("TFG*.py")} == set(RULES)
    for code in RULES:
        text = (FIXTURES / f"{code}.py").read_text()
        assert f"# expect: {code}" in text, code
        assert "fixed" in text, code  # the corrected form sits beside the bad one


def test_batch_before_a_per_example_map_is_not_flagged():
    assert (
        _codes("""
        ds = tf.data.Dataset.from_tensor_slices(x).shuffle(100).batch(32).map(lambda b: b / 255.0)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        """)
        == []
    )


def test_quiet_when_it_cannot_see():
    # A pipeline from another function, a step it cannot resolve, no visible strategy: no findings.
    assert (
        _codes("""
        ds = make_dataset()
        for x in ds:
            loss = train_step(x)
            losses.append(loss)
        model = keras.Sequential([])
        opt = keras.optimizers.SGD(clipnorm=1.0)
        """)
        == []
    )


def test_finding_format_and_message_say_why_and_what_instead():
    [finding] = lint_source(HEAD + "@tf.function\ndef f(x):\n    print(x)\n", "a.py")
    assert str(finding).startswith("a.py:5:5: TFG002 ")
    assert "trace time" in finding.message and "tf.print" in finding.message
    for code, rule in RULES.items():
        assert ";" in rule.message, code  # why; what to do instead


def _expected(path):
    return [line for line in path.with_suffix(".expected").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("path", sorted((CORPUS / "bad").glob("*.py")), ids=lambda p: p.stem)
def test_corpus_bad_loops_give_exactly_their_findings(path):
    found = [f"{f.line}:{f.column}: {f.code}" for f in lint_source(path.read_text(), str(path))]
    assert found == _expected(path)


@pytest.mark.parametrize("path", sorted((CORPUS / "clean").glob("*.py")), ids=lambda p: p.stem)
def test_corpus_clean_loops_give_none(path):
    assert lint_source(path.read_text(), str(path)) == []


def test_corpus_covers_the_common_loops_and_the_evaluation_only_ones():
    names = {p.stem for p in (CORPUS / "bad").glob("*.py")}
    assert {"naive_loop", "multitask_numpy", "mirrored_sum", "custom_training_tutorial"} <= names
    clean = {p.stem for p in (CORPUS / "clean").glob("*.py")}
    assert {"keras_guide_loop", "restore_without_strategy", "distributed_evaluation", "predict_loop"} <= clean


def _findings_on(path, text: str) -> list[str]:
    """Codes of the findings on the lines of `path` that contain `text`."""
    lines = path.read_text().splitlines()
    return [f.code for f in lint_source(path.read_text(), str(path)) if text in lines[f.line - 1]]


def test_distribute_tutorial_reports_its_unbuilt_optimizer():
    tutorial = CORPUS / "bad" / "custom_training_tutorial.py"
    assert _findings_on(tutorial, "optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)") == ["TFG018"]
    message = RULES["TFG018"].format({"name": "optimizer"})
    assert "optimizer.build(model.trainable_variables)" in message and "InvalidArgumentError" in message


def _undistributed_tutorial(tmp_path):
    """The tutorial with its datasets iterated as they are, not through `experimental_distribute_dataset`."""
    text = (CORPUS / "bad" / "custom_training_tutorial.py").read_text()
    for name in ("train_dataset", "test_dataset"):
        text = text.replace(f"strategy.experimental_distribute_dataset({name})", name)
    path = tmp_path / "undistributed.py"
    path.write_text(text)
    return path


def test_distribute_tutorial_test_loop_is_not_a_training_loop(tmp_path):
    tutorial = _undistributed_tutorial(tmp_path)
    assert _findings_on(tutorial, "for x in train_dist_dataset:") == ["TFG004"]
    assert _findings_on(tutorial, "for x in test_dist_dataset:") == []
    assert _findings_on(tutorial, "for images, labels in test_dataset:") == []


def test_a_dataset_handed_to_experimental_distribute_dataset_needs_no_prefetch(tmp_path):
    # tf.distribute adds its own prefetch at the end of the pipeline (TF's distributed input guide).
    tutorial = CORPUS / "bad" / "custom_training_tutorial.py"
    assert _findings_on(tutorial, "for x in train_dist_dataset:") == []
    assert _findings_on(_undistributed_tutorial(tmp_path), "for x in train_dist_dataset:") == ["TFG004"]


def test_distribute_tutorial_restore_without_strategy_is_not_outside_the_scope():
    tutorial = CORPUS / "bad" / "custom_training_tutorial.py"
    codes = [f.code for f in lint_source(tutorial.read_text(), str(tutorial))]
    assert "TFG007" not in codes
    assert _findings_on(tutorial, "new_model = create_model()") == []


def test_keras_guide_validation_loop_is_not_a_training_loop():
    guide = CORPUS / "clean" / "keras_guide_loop.py"
    assert "val_dataset = val_dataset.batch(batch_size)\n" in guide.read_text()  # no prefetch, as in the guide
    assert _findings_on(guide, "for x_batch_val, y_batch_val in val_dataset:") == []


def test_the_documented_rule_table_is_the_registry():
    page = (ROOT / "docs" / "lint.md").read_text()
    assert readme_table(page) == rule_table(), (
        "docs/lint.md's rule table is stale; regenerate it with: python -c \"from pathlib import Path; "
        "from tfgen.lint.report import with_rule_table as w; p = Path('docs/lint.md'); p.write_text(w(p.read_text()))\""
    )
    assert rule_table().count("\n| TFG") == len(RULES)


def _help(capsys, *args) -> str:
    with pytest.raises(SystemExit):
        main([*args, "--help"])
    return capsys.readouterr().out


def test_lint_text_never_says_where_a_pitfall_was_read(capsys):
    shipped = [rule.message + rule.finds + rule.why + rule.instead for rule in RULES.values()]
    shipped += [_help(capsys), _help(capsys, "lint")]
    assert "pitfalls" in shipped[-1]
    shipped.extend(p.read_text() for p in (ROOT / "tfgen" / "lint").rglob("*.py"))
    for text in shipped:
        assert "seed article" not in text.lower()


def test_generated_scripts_are_clean():
    """tfgen's own output is the reference clean loop."""
    findings, errors, files = lint_paths([ROOT / "generated"])
    assert files >= 2 and not errors
    assert findings == []


def test_the_whole_repository_lints_without_errors():
    # How fast it is, is not asserted here: a unit test's timing measures the machine.
    _, errors, files = lint_paths([ROOT])
    assert files > 30 and not errors


def test_lint_never_imports_tensorflow(tmp_path):
    env = import_blocker(tmp_path / "blocker")
    bad = CORPUS / "bad" / "naive_loop.py"
    result = run_tfgen("lint", "generated", str(bad), env=env)
    assert result.returncode == 1, result.stderr
    assert "TFG001" in result.stdout and "blocked" not in result.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import tensorflow"], env=env, capture_output=True, text=True, check=False
    )
    assert "blocked" in probe.stderr


# --------------------------------------------------------------------------- the command line

BAD = HEAD + "@tf.function\ndef f(x):\n    print(x)\n    return x.numpy()\n"


def _run(capsys, *args):
    code = main(["lint", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes(tmp_path, capsys):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(HEAD + "x = tf.constant(1)\n")
    bad.write_text(BAD)
    assert _run(capsys, good)[0] == 0
    code, out, _ = _run(capsys, bad)
    assert code == 1
    assert out.splitlines()[0].startswith(f"{bad}:5:5: TFG002 ")
    assert out.splitlines()[1].startswith(f"{bad}:6:12: TFG003 ")


def test_directories_recurse_into_python_files(tmp_path, capsys):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "loop.py").write_text(BAD)
    (tmp_path / "pkg" / "notes.txt").write_text("print(")
    code, out, _ = _run(capsys, tmp_path / "pkg")
    assert code == 1 and out.count("loop.py") == 2


def test_select_and_ignore(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, _ = _run(capsys, bad, "--select", "TFG003")
    assert code == 1 and "TFG003" in out and "TFG002" not in out
    code, out, _ = _run(capsys, bad, "--ignore", "TFG002,TFG003")
    assert code == 0 and out == ""
    code, out, _ = _run(capsys, bad, "--ignore", "TFG002", "--ignore", "tfg003")
    assert code == 0
    code, _, err = _run(capsys, bad, "--select", "TFG999")
    assert code == 2 and "TFG999" in err


def test_inline_ignore(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(
        HEAD + "@tf.function\ndef f(x):\n    print(x)  # tfgen: ignore[TFG002]\n"
        "    return x.numpy()  # tfgen: ignore[TFG001, TFG003]\n"
    )
    assert _run(capsys, bad)[0] == 0
    bad.write_text(HEAD + "@tf.function\ndef f(x):\n    print(x)  # tfgen: ignore[TFG003]\n")
    assert _run(capsys, bad)[0] == 1


def test_json_format(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, _ = _run(capsys, bad, "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data[0] == {"path": str(bad), "line": 5, "column": 5, "code": "TFG002", "message": RULES["TFG002"].message}


def test_sarif_format(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, _ = _run(capsys, bad, "--format", "sarif")
    sarif = json.loads(out)
    assert code == 1 and sarif["version"] == "2.1.0" and "sarif" in sarif["$schema"]
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "tfgen"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULES)
    result = run["results"][0]
    assert result["ruleId"] == "TFG002" and result["message"]["text"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == bad.as_posix()
    assert location["region"] == {"startLine": 5, "startColumn": 5}


def test_statistics(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD + "@tf.function\ndef g(x):\n    print(x)\n")
    code, out, _ = _run(capsys, bad, "--statistics")
    assert code == 1
    assert any(line.split()[:2] == ["2", "TFG002"] for line in out.splitlines())
    assert any(line.split()[:2] == ["1", "TFG003"] for line in out.splitlines())


def test_unreadable_or_unparsable_input_exits_2_located(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    pass\n")
    code, _, err = _run(capsys, broken)
    assert code == 2 and err.startswith(f"{broken}:1:") and "cannot parse" in err and "Traceback" not in err
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00bad")
    code, _, err = _run(capsys, binary)
    assert code == 2 and f"{binary}:1:1: error: cannot read" in err
    code, _, err = _run(capsys, tmp_path / "missing.py")
    assert code == 2 and "missing.py: error: no such file" in err


def test_cli_subprocess_exit_2_without_traceback(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("x = (\n")
    result = run_tfgen("lint", str(broken))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "broken.py:" in result.stderr
    result = run_tfgen("lint")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_pre_commit_hook_is_declared():
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["tfgen-lint"]["entry"] == "tfgen lint"
    assert hooks["tfgen-lint"]["types"] == ["python"]


def test_lint_modules_and_functions_stay_small():
    import ast

    for path in sorted((ROOT / "tfgen" / "lint").rglob("*.py")):
        source = path.read_text()
        assert len(source.splitlines()) <= 500, path
        functions = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        long = [f.name for f in functions if f.end_lineno - f.lineno + 1 > 40]
        assert not long, f"{path}: functions over 40 lines: {long}"
