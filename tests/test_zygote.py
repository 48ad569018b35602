"""tests/zygote.py serves a command only where a fresh interpreter would make no difference: a
served child's sys.path is a fresh interpreter's, PYTHONPATH folders included, and a folder that
shadows a module the zygote has imported gets a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import zygote

pytestmark = pytest.mark.slow  # starts a zygote: a TensorFlow import

SHOW = "import json, os, sys, numpy; print(json.dumps([os.getppid(), sys.path, numpy.__file__]))"


def started(env: dict) -> tuple[int, list[str], str]:
    """The parent pid, sys.path and numpy's file of `python -c SHOW` started with `env`."""
    result = subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, check=True, cwd="/")
    parent, path, numpy_file = json.loads(result.stdout)
    return parent, path, numpy_file


@pytest.fixture
def own_zygotes(monkeypatch):
    """Zygotes of this test's own: none started yet, whatever other tests of this process asked."""
    if zygote.ZYGOTES is None:
        pytest.skip("the zygotes are off (TFGEN_TESTS_FRESH_INTERPRETERS=1)")
    mine = zygote.Zygotes(zygote.ZYGOTES.original_popen)
    monkeypatch.setattr(zygote, "ZYGOTES", mine)
    yield
    mine.close()


def test_a_served_child_has_a_fresh_interpreters_path_and_a_shadowing_folder_is_served_fresh(tmp_path, own_zygotes):
    plain, shadowing = tmp_path / "plain", tmp_path / "shadowing"
    plain.mkdir()
    shadowing.mkdir()
    (shadowing / "numpy.py").write_text("")
    base = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    first = os.pathsep.join([str(plain), base.get("PYTHONPATH", "")])
    fresh = started({**base, "PYTHONPATH": first})  # the first request: a fresh interpreter
    served = started({**base, "PYTHONPATH": first})  # the second: a zygote's child
    assert fresh[0] == os.getpid() and served[0] != os.getpid()
    assert served[1] == fresh[1] and str(plain) == served[1][1]
    # Another plain folder: served by the same zygote, where Python would put it.
    other = os.pathsep.join([base.get("PYTHONPATH", ""), str(tmp_path)])
    parent, path, _ = started({**base, "PYTHONPATH": other})
    assert parent == served[0] and path.index(str(tmp_path)) < path.index(os.path.dirname(os.__file__))
    # A folder with a numpy of its own: a fresh interpreter, which imports that numpy.
    parent, _, numpy_file = started({**base, "PYTHONPATH": os.pathsep.join([str(shadowing), first])})
    assert parent == os.getpid() and numpy_file == str(shadowing / "numpy.py")
