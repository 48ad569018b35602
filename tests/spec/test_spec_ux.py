"""Spec UX: schema file, extends, --set, init, pre-commit hook, reviewable diffs, no injection."""

from __future__ import annotations

import ast
import difflib
import io
import json
import sys
import tokenize

import pytest
import yaml
from conftest import ROOT, SPECS, base_spec, tfgen_here
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfgen.cli import main
from tfgen.errors import SpecError, UsageError
from tfgen.generate.build import HASH_LINE, plan_targets
from tfgen.generate.init import write_starter
from tfgen.generate.render import BLACK_MODE
from tfgen.spec.script_rules import RUNTIME_PACKAGE, shadowed_modules


def test_committed_schema_equals_tfgen_schema(capsys):
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == (ROOT / "tfgen.schema.json").read_text()
    assert "extends" in json.loads((ROOT / "tfgen.schema.json").read_text())["properties"]


def test_example_specs_point_editors_at_the_schema():
    for spec in SPECS:
        assert spec.read_text().splitlines()[0] == "# yaml-language-server: $schema=../tfgen.schema.json"


def _write(path, data):
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _script(path, out_dir, overrides=()):
    """The target of one spec's script (the only file plan_targets plans without --vendor)."""
    (script,) = plan_targets([path], out_dir, overrides)
    assert script.spec is not None
    return script


def test_extends_deep_merges_and_the_extending_spec_wins(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base").mkdir()
    _write(tmp_path / "base" / "common.yaml", base_spec())
    _write(
        tmp_path / "child.yaml",
        {"extends": "base/common.yaml", "name": "child", "train": {"epochs": 9}, "data": {"train": {"batch_size": 8}}},
    )
    target = _script(tmp_path / "child.yaml", tmp_path / "out")
    assert "EPOCHS = 9" in target.text and "GLOBAL_BATCH_SIZE = 8" in target.text
    assert "SHUFFLE_BUFFER = 256" in target.text  # kept from the base
    # Errors in inherited nodes point into the file that holds them.
    _write(tmp_path / "base" / "common.yaml", base_spec(seed=-1))
    assert main(["validate", "child.yaml"]) == 2
    assert capsys.readouterr().err.startswith("base/common.yaml:2:7: seed: input should be greater than or equal to 0")


def test_extends_cycle_is_a_located_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("extends: b.yaml\nname: a\n")
    (tmp_path / "b.yaml").write_text("name: b\nextends: a.yaml\n")
    assert main(["validate", "a.yaml"]) == 2
    assert capsys.readouterr().err == "b.yaml:2:10: extends: `extends` makes a cycle: a.yaml -> b.yaml -> a.yaml\n"


def test_set_overrides_are_typed_by_the_schema_and_located(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "s.yaml", base_spec())
    target = _script(
        tmp_path / "s.yaml", tmp_path, ["optimizer.learning_rate=0.5", "output_dir=123", "model.layers.0.units=7"]
    )
    assert "learning_rate=0.5" in target.text and 'OUTPUT_DIR = "123"' in target.text and "units=7" in target.text
    plain = _script(tmp_path / "s.yaml", tmp_path)
    assert plain.spec_sha256 != target.spec_sha256  # the header hash covers the resolved spec
    assert main(["validate", "s.yaml", "--set", "data.train.batch_size=-4"]) == 2
    assert capsys.readouterr().err == (
        "--set data.train.batch_size=-4:1:23: data.train.batch_size: input should be greater than 0, found -4\n"
    )


@pytest.mark.parametrize(
    ("value", "shown", "message"),
    [
        ("runs/a\nb", "runs/a\\nb", "the line break #x000a is not allowed in a --set value (it is one line)"),
        ("runs/a\x1b[2Jb", "runs/a\\x1b[2Jb", "the control character #x001b is not allowed in YAML"),
        ("runs/a\x00b", "runs/a\\x00b", "the control character #x0000 is not allowed in YAML"),
    ],
)
def test_a_set_string_with_a_control_character_is_refused_in_one_line_as_yaml_would(
    value, shown, message, tmp_path, capsys, monkeypatch
):
    """`--set output_dir=...` kept a newline or an ESC that the same value in the spec file is refused for."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(base_spec()))
    assert main(["validate", "s.yaml", "--set", f"output_dir={value}"]) == 2
    assert capsys.readouterr().err == f"--set output_dir={shown}:1:24: {message}\n"
    if "\n" not in value:  # the same value in the spec file is refused with the same words
        (tmp_path / "t.yaml").write_text(f"output_dir: {value}\n")
        assert main(["validate", "t.yaml"]) == 2
        assert capsys.readouterr().err == f"t.yaml:1:19: {message}\n"


def test_init_writes_a_starter_that_validates_builds_and_refuses_to_overwrite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    assert tfgen_here("init", "demo", cwd=tmp_path).returncode == 0
    text = (tmp_path / "specs" / "demo.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=../tfgen.schema.json\n# ")
    assert tfgen_here("build", "specs/demo.yaml", cwd=tmp_path).returncode == 0
    again = tfgen_here("init", "demo", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr
    assert (tmp_path / "specs" / "demo.yaml").read_text() == text


@pytest.mark.parametrize("name", ["starter", "keras_model"])
def test_a_spec_init_writes_validates_and_builds(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", name]) == 0
    assert main(["validate", f"specs/{name}.yaml"]) == 0
    assert main(["build", f"specs/{name}.yaml"]) == 0
    assert (tmp_path / "generated" / f"{name}.py").is_file()


def test_init_refuses_every_name_whose_script_would_shadow_a_module(tmp_path, monkeypatch):
    """`tfgen init keras` wrote keras.yaml, which validated but did not build (keras.py shadows
    Keras); now init refuses what validate refuses, for every such name, writing nothing."""
    monkeypatch.chdir(tmp_path)
    recorded = shadowed_modules() - set(sys.stdlib_module_names)  # the standard library: a sample
    names = sorted(recorded | {RUNTIME_PACKAGE, "json", "typing", "zipfile"})
    refused = []
    for name in names:
        with pytest.raises(UsageError) as error:
            write_starter(name, tmp_path)
        refused.append(name)
        assert str(error.value).startswith("bad NAME: ") and "\n" not in str(error.value)
    assert {"keras", "google", "absl", "h5py", "json", RUNTIME_PACKAGE} <= set(refused)
    assert list(tmp_path.iterdir()) == []


def test_pre_commit_hook_runs_tfgen_check():
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["tfgen-check"]["entry"] == "tfgen check" and hooks["tfgen-check"]["language"] == "python"
    assert hooks["tfgen-lint"]["entry"] == "tfgen lint" and hooks["tfgen-lint"]["types"] == ["python"]


# --- reviewable diffs ------------------------------------------------------------------------


def _without_hash(text: str) -> list[str]:
    """The script's lines, less its `SPEC_SHA256 = ...` line (there is one) and its
    `STATE_SHA256 = ...` line (the hash of the spec less what a resume may change)."""
    lines = text.splitlines()
    found = [i for i, line in enumerate(lines) if HASH_LINE.match(line)]
    assert len(found) == 1, found
    state = [i for i, line in enumerate(lines) if line.startswith('STATE_SHA256 = "')]
    assert len(state) == 1, state
    return [line for i, line in enumerate(lines) if i not in (found[0], state[0])]


def _line_changes(before_text: str, after_text: str) -> list[str]:
    """The removed ("-") and added ("+") lines between two whole scripts, the spec's hash aside.

    Hunk by hunk, removed lines first, as `diff -U0` shows them; autojunk off, so that frequent
    lines (blank lines, closing brackets) still anchor the alignment as they do in git's diff.
    """
    old, new = _without_hash(before_text), _without_hash(after_text)
    changes = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            changes += [f"-{line}" for line in old[i1:i2]] + [f"+{line}" for line in new[j1:j2]]
    return changes


def _build_pair(tmp_path, before: dict, after: dict) -> tuple[str, str]:
    """The scripts generated from two versions of one spec file (same path, same output dir)."""
    texts = []
    for data in (before, after):
        texts.append(_script(_write(tmp_path / "spec.yaml", data), tmp_path / "out").text)
    if before != after:  # the hash covers the resolved spec
        assert HASH_LINE.search(texts[0]).group(1) != HASH_LINE.search(texts[1]).group(1)
    return texts[0], texts[1]


def _changed_lines(tmp_path, before: dict, after: dict) -> list[str]:
    """Changed lines of the whole generated script, apart from its SPEC_SHA256 line."""
    return _line_changes(*_build_pair(tmp_path, before, after))


def test_changed_lines_sees_the_whole_file_but_the_hash(tmp_path):
    spec = base_spec()
    assert _changed_lines(tmp_path, spec, spec) == []
    text = _script(_write(tmp_path / "spec.yaml", spec), tmp_path / "out").text
    rehashed = HASH_LINE.sub('SPEC_SHA256 = "' + "0" * 64 + '"', text)
    assert rehashed != text and _line_changes(text, rehashed) == []
    # A change at the very top or bottom of the file counts: no part of it is cut off.
    lines = text.splitlines(keepends=True)
    edited = "".join([lines[0].replace("DO NOT EDIT", "EDIT"), lines[1], "# added\n", *lines[2:], "# appended\n"])
    assert _line_changes(text, edited) == [
        f"-{lines[0].rstrip()}",
        f"+{lines[0].rstrip().replace('DO NOT EDIT', 'EDIT')}",
        "+# added",
        "+# appended",
    ]


def test_one_field_changes_only_the_lines_it_drives(tmp_path):
    spec = base_spec()
    faster = base_spec(optimizer={"type": "Adam", "learning_rate": 0.02})
    assert _changed_lines(tmp_path, spec, faster) == [
        "-    return keras.optimizers.Adam(learning_rate=0.01)",
        "+    return keras.optimizers.Adam(learning_rate=0.02)",
    ]
    wider = base_spec()
    wider["model"]["layers"] = [{"type": "Dense", "units": 32, "activation": "relu"}]
    assert _changed_lines(tmp_path, spec, wider) == [
        '-    x = keras.layers.Dense(units=16, activation="relu")(x)',
        '+    x = keras.layers.Dense(units=32, activation="relu")(x)',
    ]
    metric = base_spec(
        metrics={"label": ["SparseCategoricalAccuracy", {"type": "SparseTopKCategoricalAccuracy", "k": 2}]}
    )
    added = _changed_lines(tmp_path, spec, metric)
    # Two statements added (its constructor and its update), nothing else touched
    # (black wraps each of these long lines over three).
    assert all(line.startswith("+") for line in added) and len(added) <= 6, added
    joined = "".join(line[1:].strip() for line in added)  # black's wrapping undone
    assert "keras.metrics.SparseTopKCategoricalAccuracy(k=2)" in joined
    assert 'metrics["sparse_top_k_categorical_accuracy"].update_state(' in joined
    longer = base_spec(train={"epochs": 7})
    assert _changed_lines(tmp_path, spec, longer) == ["-EPOCHS = 2", "+EPOCHS = 7"]
    clipped = base_spec(train={"epochs": 2, "gradient_clipping": {"global_norm": 1.0}})
    changed = _changed_lines(tmp_path, spec, clipped)
    # Clipped gradients are summed across replicas once: the one line replaced is their apply.
    removed = [line for line in changed if line.startswith("-")]
    assert removed == ["-        self.optimizer.apply_gradients(zip(gradients, self.variables))"], changed
    added = "".join(line for line in changed if line.startswith("+"))
    assert "1.0" in added and "tf.clip_by_global_norm(gradients" in added and "rt.apply_reduced(" in added, changed


def _review_base() -> dict:
    """A small spec with early stopping, whose one-value edits are measured below."""
    return base_spec(train={"epochs": 2, "early_stopping": {"monitor": "val_loss", "patience": 2}})


def _edited(edit) -> dict:
    spec = _review_base()
    edit(spec)
    return spec


def _removed_and_added(tmp_path, after: dict) -> tuple[list[str], list[str]]:
    """Build the review base and `after` from one spec file with plan_targets; split the script's diff."""
    path = tmp_path / "review.yaml"
    texts = []
    for data in (_review_base(), after):
        (script,) = plan_targets([_write(path, data)], tmp_path / "out")
        texts.append(script.text)
    changes = _line_changes(*texts)
    return [line for line in changes if line[0] == "-"], [line for line in changes if line[0] == "+"]


ONE_VALUE_EDITS = {
    "optimizer.learning_rate": lambda s: s["optimizer"].__setitem__("learning_rate", 0.02),
    "model.layers.0.units": lambda s: s["model"]["layers"][0].__setitem__("units", 32),
    "train.early_stopping.patience": lambda s: s["train"]["early_stopping"].__setitem__("patience", 4),
}


@pytest.mark.parametrize("field", ONE_VALUE_EDITS)
def test_a_one_value_edit_is_a_small_review_diff(tmp_path, field):
    removed, added = _removed_and_added(tmp_path, _edited(ONE_VALUE_EDITS[field]))
    changed = removed + added
    assert 1 <= len(changed) <= 2, (
        f"{field}: {len(removed)} line(s) removed and {len(added)} added besides the sha256 header "
        f"(at most 2 in all):\n" + "\n".join(changed)
    )


OPTIONS_TURNED_ON = {
    "train.gradient_clipping": lambda s: s["train"].__setitem__("gradient_clipping", {"global_norm": 1.0}),
    "logging.tensorboard": lambda s: s.__setitem__("logging", {"tensorboard": True}),
}


@pytest.mark.parametrize("option", OPTIONS_TURNED_ON)
def test_turning_an_option_on_adds_lines_and_rewrites_few(tmp_path, option):
    removed, added = _removed_and_added(tmp_path, _edited(OPTIONS_TURNED_ON[option]))
    assert added, f"{option}: nothing added"
    assert len(removed) <= 2, (
        f"{option}: {len(removed)} line(s) of the old script removed or rewritten besides the sha256 header "
        f"(at most 2), {len(added)} added; removed:\n" + "\n".join(removed)
    )


# --- no injection ----------------------------------------------------------------------------

# One value of each kind in the fast tier (quotes, a backslash, a line break, non-ASCII, code, a
# template); the other spellings of each kind in the slow tier (about 2 CPU-s a value: a build
# of every field that takes it).
SLOW = pytest.mark.slow
ADVERSARIAL = [
    '"',
    pytest.param("'", marks=SLOW),
    pytest.param('"""', marks=SLOW),
    "'''",
    "\\",
    "a\nb",
    pytest.param("\\n", marks=SLOW),
    "é🙂",
    pytest.param('__import__("os").system("echo pwned")', marks=SLOW),
    '"); __import__("os").system("x")  #',
    pytest.param("${x}", marks=SLOW),
    "{{ v }}",
]


def _string_fields(spec: dict):
    """(setter, description) for every string field a user may write free text into."""
    yield lambda s, v: s.__setitem__("output_dir", v), "output_dir"
    yield lambda s, v: s["model"]["layers"][0].__setitem__("activation", v), "layer argument"
    yield (
        lambda s, v: s["metrics"]["label"].__setitem__(0, {"type": "SparseCategoricalAccuracy", "name": v}),
        "metric name",
    )
    yield (
        lambda s, v: s["data"]["train"].__setitem__("source", {"type": "npz", "path": v, "x": v, "y": v}),
        "npz path and keys",
    )
    yield lambda s, v: s["data"]["train"].__setitem__("cache", v), "cache file"
    yield (
        lambda s, v: s["data"]["train"].__setitem__("source", {"type": "python", "function": "m:f", "kwargs": {v: v}}),
        "python kwargs",
    )
    yield lambda s, v: s.__setitem__("name", v), "name"
    yield lambda s, v: s["data"]["train"].__setitem__("source", {"type": "python", "function": v}), "function"
    yield lambda s, v: s["model"].__setitem__("inputs", {v: {"shape": [8]}}), "input name"


def _constants(text: str) -> set:
    return {node.value for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Constant)}


# Tokens that hold text rather than code (Python 3.12+ splits f-strings into the last three).
TEXT_TOKENS = {tokenize.STRING, tokenize.COMMENT} | {
    getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, name)
}


def _code_only(text: str) -> str:
    """The script with every string literal and comment blanked out (line breaks kept): its code."""
    lines = io.StringIO(text).readlines()  # split as the tokenizer splits: on "\n" only
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    chars = list(text)
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in TEXT_TOKENS:
            begin = starts[token.start[0] - 1] + token.start[1]
            end = starts[token.end[0] - 1] + token.end[1]
            chars[begin:end] = [c if c == "\n" else " " for c in chars[begin:end]]
    return "".join(chars)


def _identifiers(text: str) -> set[str]:
    """The names the script's code uses (not those inside strings or comments)."""
    return {
        token.string for token in tokenize.generate_tokens(io.StringIO(text).readline) if token.type == tokenize.NAME
    }


def _text_only_problems(text: str, plain_text: str, what: str) -> list[str]:
    """Why the payloads did not land only inside string literals or comments ([] if they did).

    `plain_text` is the same spec built with a plain value in the same field: the adversarial
    value may add no name to the code, so a line break in a comment cannot start a statement.
    """
    problems = []
    try:
        tree = ast.parse(text)
        compile(text, what, "exec")
    except SyntaxError as error:
        return [f"{what}: the script does not compile: {error}"]
    code = _code_only(text)
    for marker in ("__import__", "pwned", ".system("):
        if marker in code:
            line = next(line for line in code.splitlines() if marker in line)
            problems.append(f"{what}: {marker!r} outside string literals and comments: {line.strip()!r}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__import__":
            problems.append(f"{what}: the code uses `__import__` (line {node.lineno})")
        if isinstance(node, ast.Attribute) and node.attr == "system":
            problems.append(f"{what}: the code calls `.system` (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            problems.append(f"{what}: a call of `__import__` (line {node.lineno})")
    added = _identifiers(code) - _identifiers(_code_only(plain_text))
    if added:
        problems.append(f"{what}: names in the code that a plain value does not bring: {sorted(added)}")
    return problems


@pytest.fixture(scope="module")
def plain_scripts(tmp_path_factory) -> list[str | None]:
    """Per string field, the script built with a plain value in it (None if it takes neither)."""
    folder, scripts = tmp_path_factory.mktemp("plain"), []
    for index, (setter, _) in enumerate(_string_fields(base_spec())):
        scripts.append(None)
        for plain in ("plain_text", "plain.module:plain_function"):
            spec = base_spec()
            setter(spec, plain)
            try:
                scripts[-1] = _script(_write(folder / f"plain{index}.yaml", spec), folder).text
                break
            except SpecError:
                continue
    return scripts


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_adversarial_strings_are_rejected_or_land_as_literals(tmp_path, value, plain_scripts):
    landed = 0
    for index, (setter, what) in enumerate(_string_fields(base_spec())):
        spec = base_spec()
        setter(spec, value)
        path = tmp_path / f"s{index}.yaml"
        _write(path, spec)
        try:
            target = _script(path, tmp_path)
        except SpecError as error:
            assert all(issue.line >= 1 and issue.field for issue in error.issues), (what, str(error))
            continue
        landed += 1
        assert value in _constants(target.text), what
        plain = plain_scripts[index]
        assert plain is not None, f"{what}: takes {value!r} but no plain value"
        assert _text_only_problems(target.text, plain, what) == []
    assert landed, f"{value!r}: every field rejected it, so nothing was checked"


names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: (
        s
        not in {"if", "in", "is", "or", "as", "def", "for", "and", "not", "del", "try", "with", "case", "type", "match"}
    )
)


# Slow: 25 builds (black is most of each); tests/generate/test_spec_space.py's fast tier holds
# every drawn spec to the same determinism and black-stability in the fast tier.
@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=names,
    units=st.lists(st.integers(1, 512), min_size=0, max_size=4),
    heads=st.lists(names, min_size=1, max_size=3, unique=True),
    lr=st.floats(1e-6, 1.0),
    text=st.text(max_size=20),
    patience=st.one_of(st.none(), st.integers(0, 5)),
)
def test_generated_valid_specs_always_parse_and_are_black_stable(tmp_path, name, units, heads, lr, text, patience):
    import black

    spec = base_spec(name=name, output_dir=text or "runs/x", optimizer={"type": "SGD", "learning_rate": lr})
    spec["model"]["layers"] = [{"type": "Dense", "units": u} for u in units]
    spec["model"]["outputs"] = {h: [{"type": "Dense", "units": 3}] for h in heads}
    spec["targets"] = {h: {"dtype": "int32", "classes": 3} for h in heads}
    spec["losses"] = {h: {"type": "SparseCategoricalCrossentropy", "from_logits": True, "weight": 0.5} for h in heads}
    spec["metrics"] = {heads[0]: ["SparseCategoricalAccuracy"]}
    if patience is not None:
        spec["train"]["early_stopping"] = {"monitor": "val_loss", "patience": patience}
    path = _write(tmp_path / "p.yaml", spec)
    first = plan_targets([path], tmp_path)[0].text
    assert plan_targets([path], tmp_path)[0].text == first
    ast.parse(first)
    assert black.format_str(first, mode=BLACK_MODE) == first
    assert (text or "runs/x") in _constants(first)


def test_an_image_size_over_8192_a_side_is_a_located_spec_error_not_a_traceback(tmp_path, monkeypatch, capsys):
    from folder_data import image_spec

    monkeypatch.chdir(tmp_path)
    spec = image_spec(tmp_path / "data", size=(60000, 60000))
    _write(tmp_path / "big.yaml", spec)
    assert main(["validate", "big.yaml"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        err.splitlines()[0].startswith("big.yaml:")
        and ("data.train.source.image_size.0: input should be less than or equal to 8192, found 60000")
        in err.splitlines()[0]
    )
    spec = image_spec(tmp_path / "data", size=(8192, 8192))
    _write(tmp_path / "edge.yaml", spec)
    assert main(["validate", "edge.yaml"]) == 0
