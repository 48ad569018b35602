"""`tfgen lint` on hostile input: special files, huge files, deep nesting, encodings, unreadable folders.

Each case is one located error line (or the right findings), never a hang, a traceback or memory
exhaustion, and the other files' findings are still reported."""

from __future__ import annotations

import ast
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import pytest
from conftest import ROOT, run_tfgen

from tfgen.cli import main
from tfgen.lint import RULES, lint_source
from tfgen.lint.files import MAX_BYTES, shown
from tfgen.lint.registry import rule

BAD = "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"  # TFG002 at 6:5
NO_DAC = ["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


def _lint(capsys, *paths):
    """(exit code, stdout, the error lines of stderr) of the command line, in this process."""
    code = main(["lint", *map(str, paths)])
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert "Traceback" not in err
    return code, out, "\n".join(errors) + ("\n" if errors else "")


def _limit_memory():
    gib = 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (2 * gib, 2 * gib))


def _lint_subprocess(*paths, prefix=(), memory_limit=False) -> subprocess.CompletedProcess:
    """The real command line, bounded in time (and memory), so a hang or a runaway read fails the test."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "tfgen", "lint", *map(str, paths)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_limit_memory if memory_limit else None,
    )


def test_a_fifo_named_py_is_a_located_error_not_a_hang(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    (tmp_path / "bad.py").write_text(BAD)
    result = _lint_subprocess(tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"{fifo}: error: not a regular file (a FIFO), not linted" in result.stderr.splitlines()
    assert "bad.py:6:5: TFG002 " in result.stdout and "Traceback" not in result.stderr


def test_a_fifo_named_on_the_command_line_is_a_located_error_not_a_hang(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    result = _lint_subprocess(fifo)
    assert result.returncode == 2
    assert result.stderr.strip() == f"{fifo}: error: not a regular file (a FIFO), not linted"


def test_a_py_symlink_to_dev_zero_is_not_read(tmp_path):
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "bad.py").write_text(BAD)
    result = _lint_subprocess(tmp_path, memory_limit=True)
    assert result.returncode == 2, result.stderr[-500:]
    zero = tmp_path / "zero.py"
    assert f"{zero}: error: not a regular file (a character device), not linted" in result.stderr.splitlines()
    assert "bad.py:6:5: TFG002 " in result.stdout


def test_a_file_over_the_size_limit_is_one_located_error(tmp_path, capsys):
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" + b"#" * MAX_BYTES + b"\n")
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, err = _lint(capsys, big, bad)
    assert code == 2
    assert err.splitlines() == [f"{big}: error: file is {big.stat().st_size} bytes, over the 2 MiB lint limit"]
    assert out.startswith(f"{bad}:6:5: TFG002 ")


def test_a_file_at_the_size_limit_is_linted(tmp_path, capsys):
    edge = tmp_path / "edge.py"
    body = BAD.encode()
    edge.write_bytes(body + b"#" * (MAX_BYTES - len(body) - 1) + b"\n")
    assert edge.stat().st_size == MAX_BYTES
    code, out, err = _lint(capsys, edge)
    assert code == 1 and err.count("error") == 0 and f"{edge}:6:5: TFG002 " in out


DEEP = {
    "unary-minus": "x = " + "-" * 100_000 + "1\n",
    "not": "x = " + "not " * 100_000 + "y\n",
    "lambda": "f = " + "lambda: " * 100_000 + "1\n",
    "if-else": "x = " + "1 if c else " * 100_000 + "1\n",
    "sum": "x = " + "1 + " * 100_000 + "1\n",
}


@pytest.mark.parametrize("source", DEEP.values(), ids=DEEP.keys())
def test_deeply_nested_code_is_a_located_error_and_other_files_still_report(tmp_path, capsys, source):
    deep = tmp_path / "deep.py"
    deep.write_text(source)
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    code, out, err = _lint(capsys, deep, bad)
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"{deep}:1:1: error: ") and "Traceback" not in err
    assert out.startswith(f"{bad}:6:5: TFG002 ")


def test_a_null_byte_is_a_located_parse_error(tmp_path, capsys):
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    code, _, err = _lint(capsys, nul)
    assert code == 2 and err.startswith(f"{nul}:") and "error: cannot parse" in err


class _DeepVisitor(ast.NodeVisitor):
    """A rule written the natural, recursive way: it overflows the stack on deep (but parsable) code."""


def test_a_rule_that_overflows_the_stack_is_a_located_error(tmp_path, capsys):
    deep = tmp_path / "deep.py"
    deep.write_text("x = " + "not " * 900 + "y\n")  # parses; a recursive visitor needs about 2,700 frames
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)

    @rule(code="TFG999", name="recursive-probe", message="probe", finds="-", why="-", instead="-")
    def recursive_probe(ctx):
        _DeepVisitor().visit(ctx.tree)
        yield from ()

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default (an import in the same process may have raised it)
    try:
        code, out, err = _lint(capsys, deep, bad)
    finally:
        sys.setrecursionlimit(limit)
        del RULES["TFG999"]
    assert code == 2
    assert err.splitlines() == [f"{deep}:1:1: error: cannot analyse: the code is nested too deeply (RecursionError)"]
    assert out.startswith(f"{bad}:6:5: TFG002 ")


def test_a_utf8_bom_is_read_as_python_does(tmp_path, capsys):
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    code, out, err = _lint(capsys, bom)
    assert (code, err.count("error")) == (1, 0), err
    assert out.startswith(f"{bom}:6:5: TFG002 ")


def test_a_pep263_coding_cookie_is_read_as_python_does(tmp_path, capsys):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n" + BAD.encode() + "NAME = 'caf\xe9'\n".encode("latin-1"))
    code, out, err = _lint(capsys, latin)
    assert (code, err.count("error")) == (1, 0), err
    assert out.startswith(f"{latin}:7:5: TFG002 ")


def test_an_unknown_coding_cookie_is_a_located_error(tmp_path, capsys):
    odd = tmp_path / "odd.py"
    odd.write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    code, _, err = _lint(capsys, odd)
    assert code == 2 and err.startswith(f"{odd}:1:1: error: cannot read: ")


def _without_root_privilege() -> list[str]:
    """A command prefix under which file permissions are enforced (root bypasses them by capability)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop CAP_DAC_OVERRIDE to make a folder unreadable")
    return [setpriv, *NO_DAC]


def test_an_unreadable_folder_is_reported_not_skipped(tmp_path):
    prefix = _without_root_privilege()
    tree = tmp_path / "tree"
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "hidden.py").write_text(BAD)
    (tree / "bad.py").write_text(BAD)
    (tree / "locked").chmod(0)
    try:
        result = _lint_subprocess(tree, prefix=prefix)
    finally:
        (tree / "locked").chmod(0o755)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"{tree / 'locked'}: error: cannot read directory: Permission denied" in result.stderr.splitlines()
    assert "bad.py:6:5: TFG002 " in result.stdout


def test_errors_win_over_findings_in_the_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD)
    deep = tmp_path / "deep.py"
    deep.write_text(DEEP["not"])
    code, out, err = _lint(capsys, bad, deep, tmp_path / "missing.py")
    assert code == 2
    assert f"{bad}:6:5: TFG002 " in out
    assert len(err.splitlines()) == 2  # the missing path and the deep file, one line each


STRATEGY = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
N = 5000
REPETITIVE = {
    "conversions": STRATEGY + "".join(f"y{i} = float(x)\n" for i in range(N)),
    "calls-after-a-strategy": STRATEGY + "".join(f"f{i % 50}()\n" for i in range(N)),
    "appends-in-one-loop": STRATEGY
    + "@tf.function\ndef step(x):\n    return x\nfor b in d:\n"
    + "    l.append(step(b))\n" * N,
    "one-long-pipeline": STRATEGY
    + "ds = tf.data.Dataset.range(1)\n"
    + "ds = ds.map(f)\n" * N
    + "for x in ds:\n    train_step(x)\n",
    "persistent-tapes": STRATEGY
    + "def s():\n"
    + "".join(
        f"    with tf.GradientTape(persistent=True) as t{i}:\n        l = m(x)\n    g = t{i}.gradient(l, v)\n"
        "    o.apply_gradients(g)\n"
        for i in range(N // 4)
    ),
    "regularization-reads": STRATEGY
    + "def step(x):\n    with tf.GradientTape() as tape:\n        loss = f(x)\n"
    + "".join(f"        r{i} = model.losses\n        loss = loss + r{i}\n" for i in range(N // 2))
    + "    return tape.gradient(loss, v)\nstrategy.run(step, args=(1,))\n",
}


@pytest.mark.parametrize("source", REPETITIVE.values(), ids=REPETITIVE.keys())
def test_a_large_repetitive_file_lints_in_linear_time(source):
    """Each rule indexes a file once: thousands of similar lines take seconds, not minutes."""
    started = time.process_time()  # CPU time: the linter's work, not the machine's load
    lint_source(source, "repetitive.py")
    seconds = time.process_time() - started
    assert seconds < 5.0, f"{seconds:.1f} CPU seconds for {len(source)} bytes"


def test_a_file_name_with_a_newline_cannot_forge_finding_lines(tmp_path):
    forged = "x.py:1:1: TFG002 forged finding"
    bad = tmp_path / f"a\n{forged}\nb.py"
    bad.write_text(BAD)
    broken = tmp_path / f"c\n{forged}\nd.py"
    broken.write_text("def (:\n")
    result = run_tfgen("lint", bad.name, broken.name, cwd=tmp_path)
    [line] = result.stdout.splitlines()
    assert line.startswith(repr(bad.name) + ":6:5: TFG002 ")
    [error] = [e for e in result.stderr.splitlines() if ": error: " in e]
    assert error.startswith(repr(broken.name) + ":1:")
    assert not [text for text in (result.stdout + result.stderr).splitlines() if text.startswith("x.py")]
    assert result.returncode == 2


def test_json_keeps_a_file_name_with_a_newline_as_it_is(tmp_path, capsys):
    bad = tmp_path / "a\nb.py"
    bad.write_text(BAD)
    assert main(["lint", "--format", "json", str(bad)]) == 1
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["path"] == str(bad)


def test_a_plain_file_name_is_shown_unquoted_and_an_odd_one_quoted():
    assert shown("src/train loop.py") == "src/train loop.py"
    assert shown("a\\b.py") == repr("a\\b.py") and shown("'q.py") == repr("'q.py")
    assert shown("esc\x1b[2J.py") == repr("esc\x1b[2J.py") and shown("u\u2028.py") == repr("u\u2028.py")
