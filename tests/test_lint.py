"""`tfgen lint`: every rule both ways, the corpus, tfgen's own output, the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import ROOT, import_blocker, run_tfgen

from tfgen.cli import main
from tfgen.lint import RULES, lint_paths, lint_source

CORPUS = ROOT / "tests" / "lint_corpus"
HEAD = "import tensorflow as tf\nfrom tensorflow import keras\n"


def _codes(source):
    return [(f.line, f.column, f.code) for f in lint_source(HEAD + textwrap.dedent(source).lstrip("\n"), "snippet.py")]


# (code, bad snippet, (line, column) of the finding in HEAD + bad, the corrected snippet)
CASES = [
    ("TFG001", """
        @tf.function
        def train_step(x):
            return x * 2.0
        losses = []
        for x in batches:
            losses.append(train_step(x * 1.0))
        """, (8, 5), """
        @tf.function
        def train_step(x):
            return x * 2.0
        losses = []
        for x in batches:
            losses.append(train_step(x * 1.0).numpy())
        """),
    ("TFG001", """
        @tf.function
        def train_step(x):
            return x
        history = []
        for batch in data:
            loss = train_step(batch)
            history.append(loss)
        """, (9, 5), """
        @tf.function
        def train_step(x):
            return x
        history = []
        for batch in data:
            loss = train_step(batch)
            history.append(float(loss))
        """),
    ("TFG002", """
        @tf.function
        def step(x):
            print("x is", x)
            return x
        """, (5, 5), """
        @tf.function
        def step(x):
            tf.print("x is", x)
            return x
        """),
    ("TFG003", """
        @tf.function
        def step(x):
            return x.numpy() + 1
        """, (5, 12), """
        @tf.function
        def step(x):
            return x + 1
        """),
    ("TFG003", """
        def step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
                scale = float(loss)
            return tape.gradient(loss * scale, model.trainable_variables)
        """, (6, 17), """
        def step(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            scale = float(loss)
            return tape.gradient(loss, model.trainable_variables), scale
        """),
    ("TFG004", """
        @tf.function
        def train_step(x, y):
            return x
        ds = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(100).batch(32)
        for x, y in ds:
            train_step(x, y)
        """, (7, 13), """
        @tf.function
        def train_step(x, y):
            return x
        ds = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(100).batch(32)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        for x, y in ds:
            train_step(x, y)
        """),
    ("TFG005", """
        ds = tf.data.Dataset.from_tensor_slices(x).batch(32)
        ds = ds.shuffle(1000)
        """, (4, 9), """
        ds = tf.data.Dataset.from_tensor_slices(x).shuffle(1000)
        ds = ds.batch(32)
        """),
    ("TFG006", """
        ds = tf.data.Dataset.from_tensor_slices(x)
        ds = ds.map(lambda im: tf.image.random_flip_left_right(im)).cache()
        """, (4, 61), """
        ds = tf.data.Dataset.from_tensor_slices(x).cache()
        ds = ds.map(lambda im: tf.image.random_flip_left_right(im))
        """),
    ("TFG007", """
        strategy = tf.distribute.MirroredStrategy()
        model = keras.Sequential([keras.layers.Dense(1)])
        with strategy.scope():
            optimizer = keras.optimizers.Adam()
        """, (4, 9), """
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = keras.Sequential([keras.layers.Dense(1)])
            optimizer = keras.optimizers.Adam()
        """),
    ("TFG007", """
        def build_model():
            return keras.Sequential([keras.layers.Dense(1)])
        def main():
            strategy = tf.distribute.MirroredStrategy()
            model = build_model()
            with strategy.scope():
                metric = keras.metrics.Mean()
        """, (7, 13), """
        def build_model():
            return keras.Sequential([keras.layers.Dense(1)])
        def main():
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = build_model()
                metric = keras.metrics.Mean()
        """),
    ("TFG007", """
        def inspect(strategy, model):
            part = keras.Model(model.input, model.layers[0].output)
            return part
        def main():
            strategy = tf.distribute.MirroredStrategy()
            part = inspect(strategy, build_model())
        """, (8, 12), """
        def inspect(strategy, model):
            with strategy.scope():
                part = keras.Model(model.input, model.layers[0].output)
            return part
        def main():
            strategy = tf.distribute.MirroredStrategy()
            part = inspect(strategy, build_model())
        """),
    ("TFG008", """
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(loss_fn(y, model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """, (5, 16), """
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=64)
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """),
    ("TFG008", """
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_object(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """, (6, 16), """
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_object(y, model(x)), global_batch_size=64)
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """),
    ("TFG009", """
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=64)
                loss += tf.add_n(model.losses)
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """, (6, 26), """
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=64)
                loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
            grads = tape.gradient(loss, model.trainable_variables)
        strategy.run(step, args=(x, y))
        """),
    ("TFG010", """
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            optimizer = keras.optimizers.SGD(0.1, clipvalue=1.0)
        """, (5, 43), """
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            optimizer = keras.optimizers.SGD(0.1)
        """),
    ("TFG010", """
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            optimizer = keras.optimizers.SGD(0.1, clipnorm=1.0)
        """, (5, 43), """
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        with strategy.scope():
            optimizer = keras.optimizers.SGD(0.1, clipnorm=1.0)
        """),
    ("TFG011", """
        keras.mixed_precision.set_global_policy("mixed_float16")
        optimizer = keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = model(x)
        optimizer.apply_gradients(zip(tape.gradient(loss, v), v))
        """, (3, 1), """
        keras.mixed_precision.set_global_policy("mixed_float16")
        optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())
        with tf.GradientTape() as tape:
            loss = optimizer.scale_loss(model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, v), v))
        """),
    ("TFG012", """
        keras.mixed_precision.set_global_policy("mixed_float16")
        inputs = keras.Input((8,))
        outputs = keras.layers.Dense(3, activation="softmax")(inputs)
        model = keras.Model(inputs, outputs)
        """, (5, 11), """
        keras.mixed_precision.set_global_policy("mixed_float16")
        inputs = keras.Input((8,))
        outputs = keras.layers.Dense(3, activation="softmax", dtype="float32")(inputs)
        model = keras.Model(inputs, outputs)
        """),
    ("TFG013", """
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            loss += tf.add_n(model.losses)
            return tape.gradient(loss, model.trainable_variables)
        """, (6, 22), """
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
                loss += tf.add_n(model.losses)
            return tape.gradient(loss, model.trainable_variables)
        """),
    ("TFG014", """
        layer = keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L2(0.01))
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            return tape.gradient(loss, model.trainable_variables)
        """, (7, 12), """
        layer = keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L2(0.01))
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x)) + tf.add_n(model.losses)
            return tape.gradient(loss, model.trainable_variables)
        """),
    ("TFG015", """
        ckpt = tf.train.Checkpoint(model=model)
        optimizer.apply_gradients(pairs)
        """, (3, 8), """
        ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)
        optimizer.apply_gradients(pairs)
        """),
    ("TFG015", """
        for epoch in range(3):
            optimizer.apply_gradients(pairs)
            model.save_weights("w.weights.h5")
        """, (5, 5), """
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), "c", 3)
        for epoch in range(3):
            optimizer.apply_gradients(pairs)
            manager.save()
        """),
    ("TFG016", """
        @tf.function
        def train_step(x, step):
            return x
        for i in range(100):
            train_step(x, i)
        """, (7, 19), """
        @tf.function
        def train_step(x, step):
            return x
        for i in range(100):
            train_step(x, tf.constant(i))
        """),
    ("TFG017", """
        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                loss = tf.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """, (4, 10), """
        def step(x):
            with tf.GradientTape(persistent=True) as tape:
                loss = tf.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            del tape
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """),
]


@pytest.mark.parametrize("code,bad,where,good", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_finds_the_bad_snippet_and_not_the_corrected_one(code, bad, where, good):
    assert _codes(bad) == [(*where, code)]
    assert _codes(good) == []


def test_every_rule_is_tested_both_ways():
    assert {case[0] for case in CASES} == set(RULES)


def test_batch_before_a_per_example_map_is_not_flagged():
    assert _codes("""
        ds = tf.data.Dataset.from_tensor_slices(x).shuffle(100).batch(32).map(lambda b: b / 255.0)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        """) == []


def test_quiet_when_it_cannot_see():
    # A pipeline from another function, a step it cannot resolve, no visible strategy: no findings.
    assert _codes("""
        ds = make_dataset()
        for x in ds:
            loss = train_step(x)
            losses.append(loss)
        model = keras.Sequential([])
        opt = keras.optimizers.SGD(clipnorm=1.0)
        """) == []


def test_finding_format_and_message_say_why_and_what_instead():
    [finding] = lint_source(HEAD + "@tf.function\ndef f(x):\n    print(x)\n", "a.py")
    assert str(finding).startswith("a.py:5:5: TFG002 ")
    assert "trace time" in finding.message and "tf.print" in finding.message
    for code, (name, message) in RULES.items():
        assert ";" in message, code  # why; what to do instead


def _expected(path):
    return [line for line in path.with_suffix(".expected").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("path", sorted((CORPUS / "bad").glob("*.py")), ids=lambda p: p.stem)
def test_corpus_bad_loops_give_exactly_their_findings(path):
    found = [f"{f.line}:{f.column}: {f.code}" for f in lint_source(path.read_text(), str(path))]
    assert found == _expected(path)


@pytest.mark.parametrize("path", sorted((CORPUS / "clean").glob("*.py")), ids=lambda p: p.stem)
def test_corpus_clean_loops_give_none(path):
    assert lint_source(path.read_text(), str(path)) == []


def test_corpus_covers_the_seed_articles():
    names = {p.stem for p in (CORPUS / "bad").glob("*.py")}
    assert {"naive_loop", "multitask_numpy", "mirrored_sum"} <= names
    assert len(list((CORPUS / "clean").glob("*.py"))) >= 2


def test_generated_scripts_are_clean():
    """tfgen's own output is the reference clean loop."""
    findings, errors, files = lint_paths([ROOT / "generated"])
    assert files >= 2 and not errors
    assert findings == []


def test_linting_the_whole_repository_is_fast():
    started = time.perf_counter()
    _, errors, files = lint_paths([ROOT])
    seconds = time.perf_counter() - started
    assert files > 30 and not errors
    assert seconds < 3.0, f"lint of the repository took {seconds:.2f}s"


def test_lint_never_imports_tensorflow(tmp_path):
    env = import_blocker(tmp_path / "blocker")
    bad = CORPUS / "bad" / "naive_loop.py"
    result = run_tfgen("lint", "generated", str(bad), env=env)
    assert result.returncode == 1, result.stderr
    assert "TFG001" in result.stdout and "blocked" not in result.stderr
    probe = subprocess.run([sys.executable, "-c", "import tensorflow"], env=env, capture_output=True, text=True)
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
    bad.write_text(HEAD + "@tf.function\ndef f(x):\n    print(x)  # tfgen: ignore[TFG002]\n"
                   "    return x.numpy()  # tfgen: ignore[TFG001, TFG003]\n")
    assert _run(capsys, bad)[0] == 0
    bad.write_text(HEAD + "@tf.function\ndef f(x):\n    print(x)  # tfgen: ignore[TFG003]\n")
    assert _run(capsys, bad)[0] == 1


def test_json_format(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, _ = _run(capsys, bad, "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data[0] == {"path": str(bad), "line": 5, "column": 5, "code": "TFG002", "message": RULES["TFG002"][1]}


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
    code, out, err = _run(capsys, broken)
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
